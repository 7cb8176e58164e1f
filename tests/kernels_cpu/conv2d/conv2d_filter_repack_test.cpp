// The filters repacked for cuDNN (kernels_common/conv_filter_repack.h): channel counts
// padded to multiples of 8, [Cout][kh][kw][Cin], fp32 or fp16. Run through the CPU's
// reference convolution on input padded with zero channels, the real output channels
// equal the unpadded convolution's exactly (every added product is an exact zero).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels_common/conv_filter_repack.h"
#include "kernels_common/half.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using kernels::FilterSource;
using kernels::PanelLayout;

TEST(ConvFilterRepack, PaddedChannelCounts) {
  EXPECT_EQ(kernels::padded_channel_count(3, 8), 8);
  EXPECT_EQ(kernels::padded_channel_count(1, 8), 8);
  EXPECT_EQ(kernels::padded_channel_count(8, 8), 8);
  EXPECT_EQ(kernels::padded_channel_count(9, 8), 16);
  EXPECT_EQ(kernels::padded_channel_count(64, 8), 64);
  EXPECT_EQ(kernels::padded_channel_count(5, 1), 5);
  EXPECT_THROW(kernels::padded_channel_count(5, 0), std::invalid_argument);
}

ConvShape shape_of(int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t pad) {
  ConvShape s;
  s.batch = 2, s.in_channels = cin, s.out_channels = cout;
  for (ConvAxis* a : {&s.h, &s.w}) {
    a->in = 7, a->kernel = k, a->stride = stride, a->pad_begin = pad, a->pad_end = pad;
    a->out = kernels::conv_output_length(a->in, k, stride, 1, pad, pad);
  }
  return s;
}

// The padded convolution: x with zero channels added, the repacked filter read back as
// ONNX [Cout][Cin][kh][kw] for the reference, the bias padded with zeros.
template <typename T>
std::vector<float> padded_conv(const ConvShape& s, const std::vector<float>& x, const std::vector<T>& krsc, const std::vector<float>& bias,
                               int64_t cin_p, int64_t cout_p, Activation act) {
  ConvShape p = s;
  p.in_channels = cin_p, p.out_channels = cout_p;
  const int64_t pixels = s.batch * s.h.in * s.w.in, kh = s.h.kernel, kw = s.w.kernel;
  std::vector<float> xp(static_cast<size_t>(pixels * cin_p), 0.f);
  for (int64_t i = 0; i < pixels; ++i)
    for (int64_t c = 0; c < s.in_channels; ++c) xp[static_cast<size_t>(i * cin_p + c)] = x[static_cast<size_t>(i * s.in_channels + c)];
  std::vector<float> onnx(krsc.size());
  for (int64_t k = 0; k < cout_p; ++k)
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t t = 0; t < kw; ++t)
        for (int64_t c = 0; c < cin_p; ++c) {
          const T v = krsc[static_cast<size_t>(((k * kh + r) * kw + t) * cin_p + c)];
          float f;
          if constexpr (std::is_same_v<T, float>) f = v;
          else f = kernels::half_to_float(v);
          onnx[static_cast<size_t>(((k * cin_p + c) * kh + r) * kw + t)] = f;
        }
  std::vector<float> bp(static_cast<size_t>(cout_p), 0.f);
  std::copy(bias.begin(), bias.end(), bp.begin());
  std::vector<float> y(static_cast<size_t>(s.batch * s.h.out * s.w.out * cout_p));
  Epilogue ep;
  ep.bias = bp.data(), ep.activation = act, ep.alpha = 0.2f;
  conv2d_reference(p, xp.data(), onnx.data(), y.data(), ep);
  return y;
}

void expect_real_channels_equal(const ConvShape& s, const std::vector<float>& want, const std::vector<float>& padded, int64_t cout_p,
                                const char* what) {
  const int64_t pixels = s.batch * s.h.out * s.w.out;
  int mismatches = 0;
  for (int64_t i = 0; i < pixels; ++i)
    for (int64_t k = 0; k < s.out_channels; ++k)
      if (want[static_cast<size_t>(i * s.out_channels + k)] != padded[static_cast<size_t>(i * cout_p + k)]) ++mismatches;
  EXPECT_EQ(mismatches, 0) << what;
}

TEST(ConvFilterRepack, PaddedFilterThroughTheReferenceGivesTheUnpaddedOutputExactly) {
  std::mt19937 rng(49);
  struct Case { int64_t cin, cout, k, stride, pad; };
  // RGB in, RGB out, already aligned, and odd counts on both sides.
  for (const Case& c : {Case{3, 16, 3, 1, 1}, Case{16, 3, 3, 1, 1}, Case{8, 8, 1, 1, 0}, Case{5, 13, 4, 2, 1}, Case{1, 1, 9, 1, 4}}) {
    const ConvShape s = shape_of(c.cin, c.cout, c.k, c.stride, c.pad);
    const auto x = testing::random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * c.cin));
    const auto onnx_w = testing::random_floats(rng, static_cast<size_t>(c.cout * c.cin * c.k * c.k));
    const auto bias = testing::random_floats(rng, static_cast<size_t>(c.cout));
    std::vector<float> file_w(onnx_w.size());  // [kh][kw][Cin][Cout], as the model file stores it
    pack_conv2d_weights(s, onnx_w.data(), file_w.data());
    const int64_t cin_p = kernels::padded_channel_count(c.cin, 8), cout_p = kernels::padded_channel_count(c.cout, 8);
    const size_t packed = static_cast<size_t>(cout_p * c.k * c.k * cin_p);

    std::vector<float> want(static_cast<size_t>(s.batch * s.h.out * s.w.out * c.cout));
    Epilogue ep;
    ep.bias = bias.data(), ep.activation = Activation::kLeakyRelu, ep.alpha = 0.2f;
    conv2d_reference(s, x.data(), onnx_w.data(), want.data(), ep);
    FilterSource src{.f32 = file_w.data(), .taps_h = c.k, .taps_w = c.k, .layout = PanelLayout(c.cin, c.cout, 0)};
    std::vector<float> krsc(packed, -7.f);  // every element written, padding included
    kernels::repack_filter_krsc(src, cin_p, cout_p, krsc.data());
    expect_real_channels_equal(s, want, padded_conv(s, x, krsc, bias, cin_p, cout_p, Activation::kLeakyRelu), cout_p, "fp32");
    for (int64_t k = 0; k < cout_p; ++k)
      for (int64_t t = 0; t < c.k * c.k; ++t)
        for (int64_t i = 0; i < cin_p; ++i) {
          if (k >= c.cout || i >= c.cin) {
            ASSERT_EQ(krsc[static_cast<size_t>((k * c.k * c.k + t) * cin_p + i)], 0.f) << "padding not zero";
          }
        }

    // fp16: the halves are the weights rounded to nearest; against the unpadded
    // reference on those same rounded weights, exactly again.
    std::vector<uint16_t> krsc16(packed, 0xFFFF);
    kernels::repack_filter_krsc(src, cin_p, cout_p, krsc16.data());
    std::vector<float> rounded_onnx(onnx_w.size());
    for (size_t i = 0; i < onnx_w.size(); ++i) rounded_onnx[i] = kernels::half_to_float(kernels::float_to_half(onnx_w[i]));
    std::vector<float> want16(want.size());
    conv2d_reference(s, x.data(), rounded_onnx.data(), want16.data(), ep);
    expect_real_channels_equal(s, want16, padded_conv(s, x, krsc16, bias, cin_p, cout_p, Activation::kLeakyRelu), cout_p, "fp16");
  }
}

// A transposed convolution's stored sub-kernel: per tap a Cin x Cout matrix in column
// panels (fp16 in the file here); each element lands at [k][tap][c].
TEST(ConvFilterRepack, PanelledHalfSubKernelsLandInKrscOrder) {
  std::mt19937 rng(7);
  const int64_t cin = 6, cout = 40, taps_h = 2, taps_w = 2;
  const PanelLayout layout(cin, cout, 32);
  const auto values = testing::random_floats(rng, static_cast<size_t>(taps_h * taps_w * cin * cout));
  std::vector<uint16_t> halves(values.size());
  for (size_t i = 0; i < values.size(); ++i) halves[i] = kernels::float_to_half(values[i]);
  const int64_t cin_p = 8, cout_p = 40;
  std::vector<float> out(static_cast<size_t>(cout_p * taps_h * taps_w * cin_p));
  kernels::repack_filter_krsc(FilterSource{.f16 = halves.data(), .taps_h = taps_h, .taps_w = taps_w, .layout = layout}, cin_p, cout_p, out.data());
  for (int64_t k = 0; k < cout_p; ++k)
    for (int64_t t = 0; t < taps_h * taps_w; ++t)
      for (int64_t c = 0; c < cin_p; ++c) {
        const float want = c < cin ? kernels::half_to_float(halves[static_cast<size_t>(t * cin * cout + layout.index(c, k))]) : 0.f;
        ASSERT_EQ(out[static_cast<size_t>((k * taps_h * taps_w + t) * cin_p + c)], want) << k << " " << t << " " << c;
      }
  EXPECT_THROW(kernels::repack_filter_krsc(FilterSource{.taps_h = 1, .taps_w = 1, .layout = layout}, 8, 40, out.data()), std::invalid_argument);
  EXPECT_THROW(kernels::repack_filter_krsc(FilterSource{.f16 = halves.data(), .layout = layout}, 4, 40, out.data()), std::invalid_argument);
}

}  // namespace
}  // namespace edgegan::cpu

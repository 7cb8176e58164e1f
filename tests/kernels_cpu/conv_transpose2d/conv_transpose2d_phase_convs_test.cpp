// A split transposed convolution as one forward correlation per phase
// (kernels_common/conv_transpose2d_phase_convs.h), the form the cuDNN path runs: each
// phase's window, pads and flipped sub-kernel (repacked [Cout][kh][kw][Cin], channels
// padded to 8), written to its strided share of the output by a plain correlation loop
// here, give the reference transposed convolution; every output is written once.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels_common/conv_filter_repack.h"
#include "kernels_common/conv_transpose2d_phase_convs.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using testing::random_floats;
using testing::uniform_int;

// What a library's forward convolution computes for one phase: NHWC input window with
// pads, KRSC filter of cin_p x cout_p channels, outputs at out_begin + i*stride.
void run_phase(const ConvShape& s, const PhaseConv& c, const std::vector<float>& x, const std::vector<float>& krsc, int64_t cin_p,
               int64_t cout_p, std::vector<float>& y, std::vector<int>& writes) {
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oy = 0; oy < c.h.out_count; ++oy)
      for (int64_t ox = 0; ox < c.w.out_count; ++ox) {
        const int64_t Y = c.h.out_begin + oy * s.h.stride, X = c.w.out_begin + ox * s.w.stride;
        for (int64_t k = 0; k < s.out_channels; ++k) {
          double acc = 0;
          for (int64_t r = 0; r < c.h.taps; ++r)
            for (int64_t t = 0; t < c.w.taps; ++t) {
              const int64_t iy = oy + r - c.h.pad_before, ix = ox + t - c.w.pad_before;  // in the window
              if (iy < 0 || iy >= c.h.in_length || ix < 0 || ix >= c.w.in_length) continue;
              const float* px = &x[static_cast<size_t>(((n * s.h.in + c.h.in_begin + iy) * s.w.in + c.w.in_begin + ix) * s.in_channels)];
              const float* pw = &krsc[static_cast<size_t>(((k * c.h.taps + r) * c.w.taps + t) * cin_p)];
              for (int64_t ci = 0; ci < s.in_channels; ++ci) acc += static_cast<double>(px[ci]) * pw[ci];
            }
          y[static_cast<size_t>(((n * s.h.out + Y) * s.w.out + X) * s.out_channels + k)] = static_cast<float>(acc);
          if (k == 0) ++writes[static_cast<size_t>((n * s.h.out + Y) * s.w.out + X)];
        }
      }
  (void)cout_p;
}

ConvAxis random_axis(std::mt19937& rng, int64_t in) {
  ConvAxis a;
  a.in = in;
  a.kernel = uniform_int(rng, 1, 6);
  a.stride = uniform_int(rng, 1, 4);
  a.dilation = 1;
  a.pad_begin = uniform_int(rng, 0, static_cast<int>(a.kernel) - 1);
  a.pad_end = uniform_int(rng, 0, static_cast<int>(a.kernel) - 1);
  const int64_t output_padding = uniform_int(rng, 0, static_cast<int>(a.stride) - 1);
  a.out = conv_transpose_output_length(a.in, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end, output_padding);
  return a;
}

TEST(ConvTranspose2DPhaseConvs, EveryPhaseAsAForwardCorrelationGivesTheReference) {
  std::mt19937 rng(4949);
  int checked = 0, refused = 0;
  for (int attempt = 0; checked < 150 && attempt < 3000; ++attempt) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 2);
    s.in_channels = uniform_int(rng, 1, 11);
    s.out_channels = uniform_int(rng, 1, 11);
    s.h = random_axis(rng, uniform_int(rng, 1, 6));
    s.w = random_axis(rng, uniform_int(rng, 1, 6));
    if (s.h.out < 1 || s.w.out < 1) continue;
    SCOPED_TRACE("k" + std::to_string(s.h.kernel) + "x" + std::to_string(s.w.kernel) + " s" + std::to_string(s.h.stride) + "x" +
                 std::to_string(s.w.stride) + " pads " + std::to_string(s.h.pad_begin) + "," + std::to_string(s.h.pad_end) + "," +
                 std::to_string(s.w.pad_begin) + "," + std::to_string(s.w.pad_end) + " in " + std::to_string(s.h.in) + "x" + std::to_string(s.w.in));
    std::vector<PhaseConv> convs;
    std::string why;
    if (!conv_transpose2d_phase_convs(s, convs, &why)) {
      // Without dilation, only a phase whose outputs are the bias alone is refused:
      // it has no taps, or every tap reads outside the input.
      EXPECT_TRUE(why.find("no taps") != std::string::npos || why.find("outside the input") != std::string::npos) << why;
      ++refused;
      continue;
    }
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * s.h.kernel * s.w.kernel));
    std::vector<float> ref(static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    conv_transpose2d_reference(s, x.data(), w.data(), ref.data(), Epilogue{});

    const auto phases_h = split_conv_transpose_axis(s.h), phases_w = split_conv_transpose_axis(s.w);
    const int64_t panel = uniform_int(rng, 0, 1) ? kWeightPanelColumns : 0;
    const auto packed = pack_conv_transpose2d_weights(s, phases_h, phases_w, w.data(), panel);
    const int64_t cin_p = kernels::padded_channel_count(s.in_channels, 8), cout_p = kernels::padded_channel_count(s.out_channels, 8);
    std::vector<float> y(ref.size(), NAN);
    std::vector<int> writes(static_cast<size_t>(s.batch * s.h.out * s.w.out), 0);
    for (const PhaseConv& c : convs) {
      ASSERT_GE(c.h.pad_before, 0);
      ASSERT_GE(c.w.pad_after, 0);
      ASSERT_GE(c.h.in_begin, 0);
      ASSERT_LE(c.h.in_begin + c.h.in_length, s.h.in);
      ASSERT_LE(c.w.in_begin + c.w.in_length, s.w.in);
      // The correlation's own output length is the phase's count.
      ASSERT_EQ(c.h.in_length + c.h.pad_before + c.h.pad_after - c.h.taps + 1, c.h.out_count);
      ASSERT_EQ(c.w.in_length + c.w.pad_before + c.w.pad_after - c.w.taps + 1, c.w.out_count);
      const auto& sub = packed[static_cast<size_t>(c.phase_h * s.w.stride + c.phase_w)];
      kernels::FilterSource src{.f32 = sub.data(), .taps_h = c.h.taps, .taps_w = c.w.taps,
                                .layout = PanelLayout(s.in_channels, s.out_channels, panel), .flip_taps = true};
      std::vector<float> krsc(static_cast<size_t>(cout_p * c.h.taps * c.w.taps * cin_p));
      kernels::repack_filter_krsc(src, cin_p, cout_p, krsc.data());
      run_phase(s, c, x, krsc, cin_p, cout_p, y, writes);
    }
    for (size_t i = 0; i < writes.size(); ++i) ASSERT_EQ(writes[i], 1) << "output pixel " << i << " written " << writes[i] << " times";
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref[i], 1e-5f) << i;
    ++checked;
  }
  EXPECT_EQ(checked, 150);
  RecordProperty("refused", refused);
}

TEST(ConvTranspose2DPhaseConvs, ADilationSharingAFactorWithTheStrideIsRefused) {
  ConvShape s;
  s.in_channels = s.out_channels = 2;
  for (ConvAxis* a : {&s.h, &s.w}) {
    a->in = 5, a->kernel = 3, a->stride = 2, a->dilation = 2, a->pad_begin = 1, a->pad_end = 1;
    a->out = conv_transpose_output_length(a->in, a->kernel, a->stride, a->dilation, a->pad_begin, a->pad_end, 1);
  }
  std::vector<PhaseConv> convs;
  std::string why;
  EXPECT_FALSE(conv_transpose2d_phase_convs(s, convs, &why));
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace edgegan::cpu

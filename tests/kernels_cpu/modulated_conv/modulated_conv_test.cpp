// modulated conv: the fixed-weight decomposition (input scaled by the style, the constant
// convolution, output scaled by the demodulation coefficients) against StyleGAN2's
// definition, a convolution per sample with weights W * style normalised per output channel.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "kernels_cpu/modulated_conv/modulated_conv.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

constexpr float kEps = 1e-8f;

TEST(ModulatedConv, SquaredSumsAddEveryTapPerChannelPair) {
  // 2 taps, Cin 1, Cout 2: [tap][i][o].
  const std::vector<float> w = {1, 2, 3, -4};
  std::vector<float> wsq(2);
  modulated_conv_squared_sums(2, 1, 2, w.data(), wsq.data());
  EXPECT_EQ(wsq, (std::vector<float>{10, 20}));
}

TEST(ModulatedConv, DemodulationIsOneOverTheModulatedWeightsNorm) {
  const std::vector<float> style = {2, -1}, wsq = {1, 3};  // Cin 2, Cout 1
  float d = 0;
  modulated_conv_demodulation(1, 2, 1, style.data(), wsq.data(), 0.f, &d);
  EXPECT_FLOAT_EQ(d, 1.f / std::sqrt(4.f * 1 + 1.f * 3));
}

TEST(ModulatedConv, FinishScalesThenAddsBiasThenActivates) {
  const std::vector<float> d = {2, -1}, bias = {1, 0};
  std::vector<float> y = {1, 1, -3, 2};  // 1 sample, 2 pixels, 2 channels
  modulated_conv_finish_output(1, 2, 2, d.data(), bias.data(), y.data(), Activation::kLeakyRelu, 0.5f);
  EXPECT_EQ(y, (std::vector<float>{3, -0.5f, -2.5f, -1}));
}

struct Case {
  bool transposed;
  bool demodulate;
};

// ONNX weights: a conv's [Cout][Cin][kh][kw], a transposed conv's [Cin][Cout][kh][kw].
float onnx_weight(const std::vector<float>& w, bool transposed, int64_t cin, int64_t cout, int64_t taps, int64_t o, int64_t i,
                  int64_t t) {
  return transposed ? w[static_cast<size_t>((i * cout + o) * taps + t)] : w[static_cast<size_t>((o * cin + i) * taps + t)];
}

class ModulatedConvDecomposition : public ::testing::TestWithParam<Case> {};

TEST_P(ModulatedConvDecomposition, EqualsThePerSampleModulatedWeights) {
  const Case c = GetParam();
  std::mt19937 rng(c.transposed * 2 + c.demodulate);
  for (int iter = 0; iter < 3; ++iter) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.in_channels = uniform_int(rng, 1, 6);
    s.out_channels = uniform_int(rng, 1, 6);
    const int64_t k = c.transposed ? 3 : uniform_int(rng, 1, 3) * 2 - 1;  // StyleGAN2: 3x3 up, 1x1 toRGB, 3x3, 5x5
    for (ConvAxis* a : {&s.h, &s.w}) {
      a->in = uniform_int(rng, 2, 5);
      a->kernel = k;
      a->stride = c.transposed ? 2 : 1;
      a->pad_begin = a->pad_end = c.transposed ? 0 : k / 2;
      a->out = c.transposed ? conv_transpose_output_length(a->in, k, 2, 1, 0, 0, 0) : a->in;
    }
    const int64_t taps = k * k, in_pixels = s.h.in * s.w.in, out_pixels = s.h.out * s.w.out;
    const std::vector<float> w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * taps));
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(s.batch * in_pixels * s.in_channels));
    const std::vector<float> style = random_floats(rng, static_cast<size_t>(s.batch * s.in_channels), 0.2f, 2.f);
    const std::vector<float> bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    Epilogue ep{.bias = bias.data(), .activation = Activation::kLeakyRelu, .alpha = 0.2f};
    const auto conv = [&](const ConvShape& shape, const float* in, const float* weights, float* out, const Epilogue& e) {
      if (c.transposed) conv_transpose2d_reference(shape, in, weights, out, e);
      else conv2d_reference(shape, in, weights, out, e);
    };

    // The definition: per sample, w'[o][i] = w[o][i] * style[i], times 1/|w'[o]| when demodulating.
    std::vector<float> want(static_cast<size_t>(s.batch * out_pixels * s.out_channels));
    for (int64_t n = 0; n < s.batch; ++n) {
      std::vector<float> wn(w.size());
      for (int64_t o = 0; o < s.out_channels; ++o) {
        double norm = 0;
        for (int64_t i = 0; i < s.in_channels; ++i)
          for (int64_t t = 0; t < taps; ++t) {
            const double v = onnx_weight(w, c.transposed, s.in_channels, s.out_channels, taps, o, i, t) * style[n * s.in_channels + i];
            norm += v * v;
          }
        const double d = c.demodulate ? 1.0 / std::sqrt(norm + kEps) : 1.0;
        for (int64_t i = 0; i < s.in_channels; ++i)
          for (int64_t t = 0; t < taps; ++t) {
            const size_t at = c.transposed ? static_cast<size_t>((i * s.out_channels + o) * taps + t)
                                           : static_cast<size_t>((o * s.in_channels + i) * taps + t);
            wn[at] = static_cast<float>(w[at] * style[n * s.in_channels + i] * d);
          }
      }
      ConvShape one = s;
      one.batch = 1;
      conv(one, x.data() + n * in_pixels * s.in_channels, wn.data(), want.data() + n * out_pixels * s.out_channels, ep);
    }

    // The decomposition: the weights stay constant.
    std::vector<float> packed(w.size());  // [tap][i][o]
    for (int64_t o = 0; o < s.out_channels; ++o)
      for (int64_t i = 0; i < s.in_channels; ++i)
        for (int64_t t = 0; t < taps; ++t)
          packed[static_cast<size_t>((t * s.in_channels + i) * s.out_channels + o)] =
              onnx_weight(w, c.transposed, s.in_channels, s.out_channels, taps, o, i, t);
    std::vector<float> wsq(static_cast<size_t>(s.out_channels * s.in_channels)), d(static_cast<size_t>(s.batch * s.out_channels));
    modulated_conv_squared_sums(taps, s.in_channels, s.out_channels, packed.data(), wsq.data());
    modulated_conv_demodulation(s.batch, s.in_channels, s.out_channels, style.data(), wsq.data(), kEps, d.data());
    std::vector<float> scaled(x.size()), got(want.size());
    modulated_conv_scale_input(s.batch, in_pixels, s.in_channels, style.data(), x.data(), scaled.data());
    conv(s, scaled.data(), w.data(), got.data(), Epilogue{});
    modulated_conv_finish_output(s.batch, out_pixels, s.out_channels, c.demodulate ? d.data() : nullptr, bias.data(), got.data(),
                                 Activation::kLeakyRelu, 0.2f);
    EXPECT_LT(max_abs_diff(got, want), 1e-5f) << "batch " << s.batch << " cin " << s.in_channels << " cout " << s.out_channels
                                             << " k " << k << " in " << s.h.in << "x" << s.w.in;
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, ModulatedConvDecomposition,
                         ::testing::Values(Case{false, true}, Case{false, false}, Case{true, true}, Case{true, false}),
                         [](const auto& info) {
                           return std::string(info.param.transposed ? "Transposed" : "Conv") +
                                  (info.param.demodulate ? "Demodulated" : "Modulated");
                         });

}  // namespace
}  // namespace edgegan::cpu

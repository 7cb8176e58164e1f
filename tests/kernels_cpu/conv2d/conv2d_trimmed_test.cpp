// Trimmed conv == reference over random geometries (stride, dilation, asymmetric pads).
#include <gtest/gtest.h>

#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "tests/test_util.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_common/conv_geometry.h"
#include "tests/kernels_cpu/conv2d/conv2d_random_case.h"
#include "tests/kernels_cpu/fused_prelu.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(Conv2DProperty, TrimmedMatchesReferenceOnRandomGeometries) {
  std::mt19937 rng(99);
  int checked = 0;
  for (int attempt = 0; checked < 400; ++attempt) {
    ASSERT_LT(attempt, 10000);
    ConvShape s;
    s.batch = uniform_int(rng, 1, 3);
    // Both paths: Cin < 16 gathers all taps per pixel, wider inputs run per-tap indirect GEMMs.
    s.in_channels = checked % 2 ? uniform_int(rng, 1, 9) : uniform_int(rng, 16, 40);
    s.out_channels = uniform_int(rng, 1, 9);
    for (ConvAxis* a : {&s.h, &s.w}) {
      a->in = uniform_int(rng, 1, 12);
      a->kernel = uniform_int(rng, 1, 6);
      a->stride = uniform_int(rng, 1, 4);
      a->dilation = uniform_int(rng, 1, 3);
      a->pad_begin = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->pad_end = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->out = conv_output_length(a->in, a->kernel, a->stride, a->dilation, a->pad_begin, a->pad_end);
    }
    if (s.h.out < 1 || s.w.out < 1) continue;
    // The MAC count the memory report uses: (output, tap) pairs reading inside the input.
    for (const ConvAxis* a : {&s.h, &s.w}) {
      uint64_t brute = 0;
      for (int64_t o = 0; o < a->out; ++o)
        for (int64_t k = 0; k < a->kernel; ++k) {
          const int64_t i = o * a->stride - a->pad_begin + k * a->dilation;
          brute += (i >= 0 && i < a->in) ? 1 : 0;
        }
      ASSERT_EQ(conv_useful_pairs(*a), brute);
    }
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.out_channels * s.in_channels * s.h.kernel * s.w.kernel));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    Epilogue ep;
    ep.bias = uniform_int(rng, 0, 1) ? bias.data() : nullptr;
    std::vector<float> slopes;
    draw_epilogue_activation(rng, ep, slopes, s.out_channels);
    const size_t out_size = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
    std::vector<float> ref(out_size), y(out_size, NAN), packed(w.size());
    conv2d_reference(s, x.data(), w.data(), ref.data(), ep);
    pack_conv2d_weights(s, w.data(), packed.data());
    conv2d_trimmed(s, packed.data(), x.data(), y.data(), ep, uniform_int(rng, 1, 2));
    // Rounding grows with the reduction depth (up to 40 channels x 36 taps here).
    const float tol = 1e-5f + 2e-7f * static_cast<float>(s.in_channels * s.h.kernel * s.w.kernel);
    ASSERT_LE(max_abs_diff(y, ref), tol) << "in " << s.h.in << "x" << s.w.in << " k" << s.h.kernel << "x" << s.w.kernel << " s"
                                           << s.h.stride << "x" << s.w.stride << " d" << s.h.dilation << "x" << s.w.dilation;
    ++checked;
  }
}

// Deeper than one depth block (Cin > 256), more pixels than one block, a ragged last block.
TEST(Conv2DProperty, TrimmedMatchesReferenceAcrossDepthAndPixelBlocks) {
  std::mt19937 rng(7);
  ConvShape s;
  s.batch = 3;
  s.in_channels = 300;
  s.out_channels = 37;
  for (ConvAxis* a : {&s.h, &s.w}) {
    a->in = 9;
    a->kernel = 4;
    a->stride = 2;
    a->pad_begin = a->pad_end = 1;
    a->out = conv_output_length(a->in, a->kernel, a->stride, a->dilation, a->pad_begin, a->pad_end);
  }
  const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
  const auto w = random_floats(rng, static_cast<size_t>(s.out_channels * s.in_channels * s.h.kernel * s.w.kernel));
  const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
  const Epilogue ep{bias.data(), Activation::kLeakyRelu, 0.2f};
  const size_t out_size = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
  std::vector<float> ref(out_size), packed(w.size());
  conv2d_reference(s, x.data(), w.data(), ref.data(), ep);
  pack_conv2d_weights(s, w.data(), packed.data());
  for (int threads : {1, 2}) {
    std::vector<float> y(out_size, NAN);
    conv2d_trimmed(s, packed.data(), x.data(), y.data(), ep, threads);
    EXPECT_LE(max_abs_diff(y, ref), 1e-3f) << threads << " thread(s)";
  }
}

// Few pixels (at most one block's 256) and at least 64 output channels: the threads split
// the output channels in 32-column chunks (a U-Net's innermost layers). Against the
// reference with every activation, residuals, input maps and depths past one block; the
// same bits at 1 and 2 threads.
TEST(Conv2DProperty, ChannelSplitOnFewPixelsMatchesReferenceAndThreads) {
  std::mt19937 rng(123);
  int checked = 0;
  for (int trial = 0; trial < 60; ++trial) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 2);
    s.in_channels = uniform_int(rng, 0, 3) == 0 ? uniform_int(rng, 257, 300) : uniform_int(rng, 16, 96);
    s.out_channels = uniform_int(rng, 64, 200);
    const bool mapped = trial % 3 == 1;
    const RandomAxes axes = draw_random_axes(rng, s, mapped, 2, 12, [&](int, ConvAxis& a) {
      a.kernel = uniform_int(rng, 1, 4);
      a.stride = uniform_int(rng, 1, 2);
      a.dilation = 1;
      a.pad_begin = uniform_int(rng, 0, 2);
      a.pad_end = uniform_int(rng, 0, 2);
    });
    if (s.h.out < 1 || s.w.out < 1 || s.batch * s.h.out * s.w.out > 256) continue;
    const Conv2DRandomCase c = make_conv2d_random_case(rng, s, mapped, axes);
    const std::vector<float> packed = c.packed_weights();
    std::vector<float> first;
    for (int threads : {1, 2}) {
      std::vector<float> y(c.ref.size(), NAN);
      conv2d_trimmed(s, packed.data(), c.x.data(), y.data(), c.ep, threads, nullptr, c.input_map());
      ASSERT_LE(worst_relative_error(y, c.ref), 1e-4f) << "trial " << trial << ": " << s.in_channels << " -> " << s.out_channels << ", "
                                                       << threads << " threads";
      if (threads == 1) first = y;
      else EXPECT_EQ(y, first) << "trial " << trial << ": 2 threads differ from 1";
    }
    ++checked;
  }
  EXPECT_GT(checked, 30);
}

}  // namespace
}  // namespace edgegan::cpu

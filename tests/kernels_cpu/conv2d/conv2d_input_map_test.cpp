// Convolutions reading their input through a fused input map (a reflect/edge/wrap Pad
// and nearest upsampling folded into their addressing): every forward path (trimmed
// with many and with few input channels, depthwise, grouped) against the same kernel
// on the map materialised, bit for bit, over random geometries, maps and thread
// counts; the engine's tables against their definition; and the backward's gather and
// fold against plain loops.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels_cpu/conv2d/conv2d_grouped.h"
#include "kernels_cpu/conv2d/conv2d_input_map.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/pad/pad.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

// One axis's table: nearest upsampling by `up` (floor(o / up)), then a pad in `mode`.
std::vector<int32_t> axis_table(int64_t src, int64_t up, PadMode mode, int64_t begin, int64_t end) {
  const PadAxis a{src * up, begin, end};
  std::vector<int32_t> t(static_cast<size_t>(a.out()));
  for (int64_t o = 0; o < a.out(); ++o) t[static_cast<size_t>(o)] = static_cast<int32_t>(pad_source(a, mode, o) / up);
  return t;
}

struct MappedCase {
  ConvShape shape;  // over the map
  int64_t groups = 1;
  int64_t src_h = 0, src_w = 0;
  std::vector<int32_t> rows, cols;
  ConvInputMap map() const { return {rows.data(), cols.data(), src_h, src_w}; }
};

// path 0: trimmed, >= 16 inputs; 1: trimmed, few inputs; 2: depthwise; 3: grouped.
MappedCase random_case(std::mt19937& rng, int path) {
  for (;;) {
    MappedCase c;
    ConvShape& s = c.shape;
    s.batch = uniform_int(rng, 1, 2);
    switch (path) {
      case 0: s.in_channels = uniform_int(rng, 16, 21), s.out_channels = uniform_int(rng, 1, 19); break;
      case 1: s.in_channels = uniform_int(rng, 1, 5), s.out_channels = uniform_int(rng, 1, 9); break;
      case 2: c.groups = s.in_channels = uniform_int(rng, 2, 19), s.out_channels = s.in_channels * uniform_int(rng, 1, 2); break;
      default: c.groups = uniform_int(rng, 2, 3), s.in_channels = c.groups * uniform_int(rng, 1, 17), s.out_channels = c.groups * uniform_int(rng, 1, 5);
    }
    const PadMode mode = static_cast<PadMode>(uniform_int(rng, 1, 3));
    int64_t* src[2] = {&c.src_h, &c.src_w};
    std::vector<int32_t>* table[2] = {&c.rows, &c.cols};
    ConvAxis* axes[2] = {&s.h, &s.w};
    for (int k = 0; k < 2; ++k) {
      ConvAxis& a = *axes[k];
      *src[k] = uniform_int(rng, 1, 7);
      const int64_t up = uniform_int(rng, 1, 3);
      // Reflect needs pads shorter than the upsampled length to stay a plain mirror; any length works, though.
      const InputMapAxis axis{up, uniform_int(rng, 0, 3), uniform_int(rng, 0, 3)};
      *table[k] = axis_table(*src[k], up, mode, axis.pad_begin, axis.pad_end);
      std::vector<int32_t> built(static_cast<size_t>(axis.length(*src[k])));
      conv_input_map_table(*src[k], axis, mode, built.data());
      EXPECT_EQ(built, *table[k]);
      a.in = static_cast<int64_t>(table[k]->size());
      a.kernel = uniform_int(rng, 1, 5);
      a.stride = uniform_int(rng, 1, 2);
      a.dilation = uniform_int(rng, 0, 3) == 0 ? 2 : 1;
      a.pad_begin = uniform_int(rng, 0, 1);  // the convolution's own zero pads stay
      a.pad_end = uniform_int(rng, 0, 1);
      a.out = conv_output_length(a.in, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end);
    }
    if (s.h.out >= 1 && s.w.out >= 1) return c;
  }
}

// x read through the map, by plain loops.
std::vector<float> materialise(const MappedCase& c, const std::vector<float>& x) {
  const ConvShape& s = c.shape;
  std::vector<float> out(static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t r = 0; r < s.h.in; ++r)
      for (int64_t q = 0; q < s.w.in; ++q)
        for (int64_t k = 0; k < s.in_channels; ++k)
          out[static_cast<size_t>(((n * s.h.in + r) * s.w.in + q) * s.in_channels + k)] =
              x[static_cast<size_t>(((n * c.src_h + c.rows[static_cast<size_t>(r)]) * c.src_w + c.cols[static_cast<size_t>(q)]) * s.in_channels + k)];
  return out;
}

void run(const MappedCase& c, const float* w, const float* x, float* y, const Epilogue& ep, int threads, const ConvInputMap* map) {
  const ConvShape& s = c.shape;
  if (c.groups == 1) {
    std::vector<float> ws(static_cast<size_t>(conv2d_trimmed_workspace(s, threads)) + 1);
    conv2d_trimmed(s, w, x, y, ep, threads, ws.data(), map);
  } else if (conv2d_is_depthwise(s, c.groups)) {
    conv2d_depthwise(s, w, x, y, ep, threads, map);
  } else {
    std::vector<float> ws(static_cast<size_t>(conv2d_grouped_workspace(s, c.groups, threads)) + 1);
    conv2d_grouped(s, c.groups, w, x, y, ep, threads, ws.data(), map);
  }
}

TEST(Conv2DInputMap, EveryForwardPathEqualsItsRunOnTheMaterialisedMap) {
  std::mt19937 rng(2611);
  for (int trial = 0; trial < 160; ++trial) {
    const MappedCase c = random_case(rng, trial % 4);
    const ConvShape& s = c.shape;
    SCOPED_TRACE("trial " + std::to_string(trial) + " path " + std::to_string(trial % 4) + " groups " + std::to_string(c.groups));
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(s.batch * c.src_h * c.src_w * s.in_channels));
    const std::vector<float> onnx_w = random_floats(rng, static_cast<size_t>(s.out_channels * (s.in_channels / c.groups) * s.h.kernel * s.w.kernel));
    const std::vector<float> bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    std::vector<float> packed(onnx_w.size());
    pack_conv2d_grouped_weights(s, c.groups, onnx_w.data(), packed.data());
    const Epilogue ep{bias.data(), Activation::kLeakyRelu, 0.2f};
    const std::vector<float> logical = materialise(c, x);
    const size_t out = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
    std::vector<float> want(out), ref(out);
    run(c, packed.data(), logical.data(), want.data(), ep, 1, nullptr);
    conv2d_grouped_reference(s, c.groups, logical.data(), onnx_w.data(), ref.data(), ep);
    ASSERT_LT(max_abs_diff(want, ref), 1e-4f);
    const ConvInputMap map = c.map();
    for (int threads : {1, 2}) {
      std::vector<float> got(out, -7.f);
      run(c, packed.data(), x.data(), got.data(), ep, threads, &map);
      ASSERT_EQ(got, want) << "threads " << threads;
    }
  }
}

TEST(Conv2DInputMap, GatherAndFoldMatchPlainLoops) {
  std::mt19937 rng(77);
  for (int trial = 0; trial < 40; ++trial) {
    const MappedCase c = random_case(rng, trial % 4);
    const ConvShape& s = c.shape;
    const ConvInputMap map = c.map();
    const int64_t cin = s.in_channels;
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(s.batch * c.src_h * c.src_w * cin));
    const std::vector<float> d = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * cin));
    std::vector<float> want_dx(x.size(), 0.f);
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t r = 0; r < s.h.in; ++r)
        for (int64_t q = 0; q < s.w.in; ++q)
          for (int64_t k = 0; k < cin; ++k)
            want_dx[static_cast<size_t>(((n * c.src_h + c.rows[static_cast<size_t>(r)]) * c.src_w + c.cols[static_cast<size_t>(q)]) * cin + k)] +=
                d[static_cast<size_t>(((n * s.h.in + r) * s.w.in + q) * cin + k)];
    for (int threads : {1, 2}) {
      std::vector<float> gathered(d.size(), -1.f);
      conv_input_map_gather(s.batch, s.h.in, s.w.in, cin, map, x.data(), gathered.data(), threads);
      ASSERT_EQ(gathered, materialise(c, x));
      std::vector<float> dx(x.size(), 5.f);
      conv_input_map_fold(s.batch, s.h.in, s.w.in, cin, map, d.data(), dx.data(), false, threads);
      ASSERT_LT(max_abs_diff(dx, want_dx), 1e-5f);
      std::vector<float> again = dx;
      conv_input_map_fold(s.batch, s.h.in, s.w.in, cin, map, d.data(), again.data(), true, threads);
      for (size_t i = 0; i < dx.size(); ++i) ASSERT_NEAR(again[i], 2 * dx[i], 1e-5f);
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu

// One random convolution case for the fast-path tests to share: input, weights (ONNX
// order), an epilogue drawn over every activation (a residual only without one), an
// optional reflect input map, and the reference output (computed on the map gathered,
// the residual added).
#pragma once

#include <random>
#include <vector>

#include "kernels_cpu/conv2d/conv2d_input_map.h"
#include "kernels_cpu/conv2d/conv2d_reference.h"
#include "tests/test_util.h"
#include "tests/kernels_cpu/fused_prelu.h"

namespace edgegan::cpu {

struct Conv2DRandomCase {
  ConvShape s;
  std::vector<float> x, w, bias, residual, ref, slopes;
  Epilogue ep;
  bool mapped = false;
  std::vector<int32_t> rows, cols;
  ConvInputMap map{};
  const ConvInputMap* input_map() const { return mapped ? &map : nullptr; }
  std::vector<float> packed_weights() const {
    std::vector<float> packed(w.size());
    pack_conv2d_weights(s, w.data(), packed.data());
    return packed;
  }
};

// The two axes of a random case. Per axis: the source length from [src_lo, src_hi];
// when mapped, a reflect map's factor (1-2) and pads (0-1), the source at least 2 (what
// reflect needs); the length the convolution sees; then geometry(axis, a) sets the
// kernel, stride, dilation and pads (axis 0: h), and a.out follows.
struct RandomAxes {
  InputMapAxis map_h, map_w;
  int64_t src_h = 0, src_w = 0;
};
template <typename Geometry>
RandomAxes draw_random_axes(std::mt19937& rng, ConvShape& s, bool mapped, int64_t src_lo, int64_t src_hi, Geometry geometry) {
  using edgegan::testing::uniform_int;
  RandomAxes r;
  for (int axis = 0; axis < 2; ++axis) {
    ConvAxis& a = axis == 0 ? s.h : s.w;
    InputMapAxis& m = axis == 0 ? r.map_h : r.map_w;
    int64_t& src = axis == 0 ? r.src_h : r.src_w;
    src = uniform_int(rng, src_lo, src_hi);
    if (mapped) {
      m.factor = uniform_int(rng, 1, 2);
      m.pad_begin = uniform_int(rng, 0, 1);
      m.pad_end = uniform_int(rng, 0, 1);
      src = std::max<int64_t>(src, 2);
    }
    a.in = m.length(src);
    geometry(axis, a);
    a.out = conv_output_length(a.in, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end);
  }
  return r;
}

// `s` gives the geometry the convolution sees (with a map: the mapped size); x is
// batch x src_h x src_w x Cin, read through reflect tables for map_h and map_w when mapped.
inline Conv2DRandomCase make_conv2d_random_case(std::mt19937& rng, const ConvShape& s, bool mapped, int64_t src_h, int64_t src_w,
                                                const InputMapAxis& map_h, const InputMapAxis& map_w) {
  using edgegan::testing::random_floats;
  using edgegan::testing::uniform_int;
  Conv2DRandomCase c;
  c.s = s;
  c.mapped = mapped;
  c.x = random_floats(rng, static_cast<size_t>(s.batch * src_h * src_w * s.in_channels));
  c.w = random_floats(rng, static_cast<size_t>(s.out_channels * s.in_channels * s.h.kernel * s.w.kernel));
  c.bias = random_floats(rng, static_cast<size_t>(s.out_channels));
  const size_t out_size = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels);
  c.residual = random_floats(rng, out_size);
  c.ep.bias = uniform_int(rng, 0, 1) ? c.bias.data() : nullptr;
  c.ep.activation = static_cast<Activation>(uniform_int(rng, 0, kActivationCount - 1));
  c.ep.alpha = c.ep.activation == Activation::kClip ? -0.5f : 0.2f;
  c.ep.beta = c.ep.activation == Activation::kClip ? 0.5f : c.ep.activation == Activation::kSelu ? 1.0507f : 0.5f;
  if (c.ep.activation == Activation::kNone && uniform_int(rng, 0, 1)) c.ep.residual = c.residual.data();
  if (c.ep.activation == Activation::kPRelu) {
    c.slopes = random_prelu_slopes(rng, s.out_channels);
    c.ep.slope = c.slopes.data();
  }

  std::vector<float> seen = c.x;
  if (mapped) {
    c.rows.resize(static_cast<size_t>(s.h.in));
    c.cols.resize(static_cast<size_t>(s.w.in));
    conv_input_map_table(src_h, map_h, PadMode::kReflect, c.rows.data());
    conv_input_map_table(src_w, map_w, PadMode::kReflect, c.cols.data());
    c.map = {c.rows.data(), c.cols.data(), src_h, src_w};
    seen.assign(static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels), 0.f);
    conv_input_map_gather(s.batch, s.h.in, s.w.in, s.in_channels, c.map, c.x.data(), seen.data(), 1);
  }
  c.ref.resize(out_size);
  Epilogue ref_ep = c.ep;
  ref_ep.residual = nullptr;
  conv2d_reference(s, seen.data(), c.w.data(), c.ref.data(), ref_ep);
  if (c.ep.residual)
    for (size_t i = 0; i < out_size; ++i) c.ref[i] += c.residual[i];
  return c;
}
inline Conv2DRandomCase make_conv2d_random_case(std::mt19937& rng, const ConvShape& s, bool mapped, const RandomAxes& axes) {
  return make_conv2d_random_case(rng, s, mapped, axes.src_h, axes.src_w, axes.map_h, axes.map_w);
}

// The largest |y - ref| / max(1, |ref|).
inline float worst_relative_error(const std::vector<float>& y, const std::vector<float>& ref) {
  float worst = 0.f;
  for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(y[i] - ref[i]) / std::max(1.f, std::abs(ref[i])));
  return worst;
}

}  // namespace edgegan::cpu

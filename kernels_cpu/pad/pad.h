// Spatial padding of an NHWC map [N][H][W][C]: output row o reads input row
// o - pad_top (likewise columns). A negative pad crops that side first; the border is
// then filled from the cropped map by the mode (ONNX Pad, numpy.pad semantics):
// constant `value`, reflect (mirror without repeating the edge, periodic for wide
// pads), edge (the edge repeated) or wrap (the opposite side).
#pragma once

#include <cstdint>

namespace edgegan::cpu {

enum class PadMode : int { kConstant = 0, kReflect = 1, kEdge = 2, kWrap = 3 };  // numbered as schema::PadMode

struct PadAxis {
  int64_t in = 1;
  int64_t pad_begin = 0, pad_end = 0;
  int64_t out() const { return in + pad_begin + pad_end; }
  // The cropped source [lo, hi) the border is filled from.
  int64_t lo() const { return pad_begin < 0 ? -pad_begin : 0; }
  int64_t hi() const { return pad_end < 0 ? in + pad_end : in; }
};

struct PadShape {
  int64_t batch = 1, channels = 1;
  PadAxis h, w;
  PadMode mode = PadMode::kConstant;
  float value = 0.f;
};

// The input index output index o reads along an axis, or -1 for the constant fill.
// Needs hi() > lo() (a non-empty cropped source).
inline int64_t pad_source(const PadAxis& a, PadMode mode, int64_t o) {
  const int64_t i = o - a.pad_begin, lo = a.lo(), hi = a.hi();
  if (i >= lo && i < hi) return i;
  const int64_t len = hi - lo;
  int64_t j = i - lo;  // outside [0, len)
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return j < 0 ? lo : hi - 1;
    case PadMode::kWrap: j %= len; if (j < 0) j += len; return lo + j;
    case PadMode::kReflect: {
      if (len == 1) return lo;
      const int64_t period = 2 * (len - 1);
      j %= period;
      if (j < 0) j += period;
      return lo + (j < len ? j : period - j);
    }
  }
  return -1;
}

// Plain loops: every output element from pad_source.
void pad_reference(const PadShape& s, const float* x, float* y);

// Per output row: the interior as one contiguous copy, the border pixel by pixel;
// parallel over batch x output rows.
void pad(const PadShape& s, const float* x, float* y, int threads);

// dx[i] = sum of dy over the outputs that read input i (zero outside the cropped
// source). Each input row of dx is owned by one thread and sums its output rows in
// ascending order, pixels in ascending order: deterministic for any thread count.
// accumulate: add to dx instead of overwriting it.
void pad_backward(const PadShape& s, const float* dy, float* dx, bool accumulate, int threads);

}  // namespace edgegan::cpu

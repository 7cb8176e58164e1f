// The shape of a spatial padding of an NHWC map [N][H][W][C] and the index each output
// reads: output row o reads input row o - pad_top (likewise columns). A negative pad
// crops that side first; the border is then filled from the cropped map by the mode
// (ONNX Pad, numpy.pad semantics). Both backends' pad kernels, and the convolutions
// that read a pad through index tables, take it.
#pragma once

#include <cstdint>

namespace edgegan::kernels {

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

}  // namespace edgegan::kernels

// The CPU kernels name these unqualified, and callers as cpu::; one definition.
namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu

// Resize of NHWC maps along H and W (ONNX Resize: nearest, linear, cubic), as the ONNX
// reference computes it. Each axis maps output index o to a source coordinate
//   half_pixel             (o + 0.5) / scale - 0.5
//   pytorch_half_pixel     L != 1 ? (o + 0.5) / scale - 0.5 : -0.5
//   align_corners          L != 1 ? o * (in - 1) / (L - 1) : 0
//   asymmetric             o / scale
//   half_pixel_symmetric   in/2 * (1 - out / (scale*in)) + (o + 0.5) / scale - 0.5
//   tf_half_pixel_for_nn   (o + 0.5) / scale
// where L = in * scale unrounded (out when the model gave sizes), as the ONNX
// reference (onnx/reference/ops/op_resize.py) has it, and reads 1 (nearest), 2 (linear) or 4 (cubic) taps around it; indices outside the
// map take the edge value, or, with exclude_outside, get weight 0 and the rest are
// renormalised. The 2-D result is the product of the two axes' weights.
//
// This file: the shape, the per-axis taps and the tables built from them once, which
// both backends' resize kernels take.
#pragma once

#include <cstdint>

namespace edgegan::kernels {

// Numbered as the schema's enums.
enum class ResizeMode : int { kNearest = 0, kLinear = 1, kCubic = 2 };
enum class ResizeCoordinates : int { kHalfPixel = 0, kPytorchHalfPixel = 1, kAlignCorners = 2, kAsymmetric = 3, kHalfPixelSymmetric = 4, kTfHalfPixelForNn = 5 };
enum class ResizeNearest : int { kRoundPreferFloor = 0, kRoundPreferCeil = 1, kFloor = 2, kCeil = 3 };

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoordinates coordinates = ResizeCoordinates::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
};

struct ResizeAxis {
  int64_t in = 1, out = 1;
  double scale = 0;  // output/input as the coordinates use it; 0: out / in
  double effective_scale() const { return scale > 0 ? scale : static_cast<double>(out) / static_cast<double>(in); }
};

struct ResizeShape {
  int64_t batch = 1, channels = 1;
  ResizeAxis h, w;
  ResizeParams params;
};

inline int resize_taps(ResizeMode m) { return m == ResizeMode::kNearest ? 1 : m == ResizeMode::kLinear ? 2 : 4; }

// The taps of output index o along an axis: indices (clamped into the map) and weights.
void resize_axis_taps(const ResizeAxis& a, const ResizeParams& p, int64_t o, int32_t* index, float* weight);

// Both axes' taps for every output index, computed once into caller storage (a
// kernel's weight-like tables), and the transposed H table the backward walks: for
// input row i, the pairs (output row, weight) that read it, in ascending output row
// and tap order.
struct ResizeTables {
  int taps = 1;
  const int32_t* h_index = nullptr;  // [h.out][taps], clamped
  const float* h_weight = nullptr;
  const int32_t* w_index = nullptr;  // [w.out][taps]
  const float* w_weight = nullptr;
  const int32_t* h_readers_begin = nullptr;  // [h.in + 1] offsets into the two below
  const int32_t* h_reader_row = nullptr;
  const float* h_reader_weight = nullptr;
};
// Bytes of storage resize_build_tables fills (4-byte aligned).
uint64_t resize_table_bytes(const ResizeShape& s);
ResizeTables resize_build_tables(const ResizeShape& s, void* storage);

}  // namespace edgegan::kernels

// The CPU kernels name these unqualified, and callers as cpu::; one definition.
namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu

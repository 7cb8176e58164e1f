#include "kernels_common/resize_shape.h"

#include <algorithm>
#include <cmath>

namespace edgegan::kernels {
namespace {

double source_coordinate(const ResizeAxis& a, ResizeCoordinates c, int64_t o) {
  const double scale = a.effective_scale(), in = static_cast<double>(a.in), out = static_cast<double>(a.out), x = static_cast<double>(o);
  // The ONNX reference's output length: in * scale, not rounded (the integer length when
  // the model gave sizes). align_corners and pytorch_half_pixel use it.
  const double length = a.scale > 0 ? in * scale : out;
  switch (c) {
    case ResizeCoordinates::kHalfPixel: return (x + 0.5) / scale - 0.5;
    case ResizeCoordinates::kPytorchHalfPixel: return length != 1 ? (x + 0.5) / scale - 0.5 : -0.5;
    case ResizeCoordinates::kAlignCorners: return length != 1 ? x * (in - 1) / (length - 1) : 0.0;
    case ResizeCoordinates::kAsymmetric: return x / scale;
    case ResizeCoordinates::kHalfPixelSymmetric: {
      const double adjustment = out / (scale * in);
      return in / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    }
    case ResizeCoordinates::kTfHalfPixelForNn: return (x + 0.5) / scale;
  }
  return 0.0;
}

int32_t clamp_index(int64_t i, int64_t in) { return static_cast<int32_t>(std::clamp<int64_t>(i, 0, in - 1)); }

}  // namespace

void resize_axis_taps(const ResizeAxis& a, const ResizeParams& p, int64_t o, int32_t* index, float* weight) {
  // Far outside the map every tap reads the edge; clamping first keeps the floor in range.
  const double x = std::clamp(source_coordinate(a, p.coordinates, o), -4.0, static_cast<double>(a.in) + 3.0);
  const double fl = std::floor(x), t = x - fl;
  const int64_t i0 = static_cast<int64_t>(fl);
  if (p.mode == ResizeMode::kNearest) {
    int64_t i = i0;
    if (t > 0) {
      switch (p.nearest) {
        case ResizeNearest::kRoundPreferFloor: i += t > 0.5 ? 1 : 0; break;
        case ResizeNearest::kRoundPreferCeil: i += t >= 0.5 ? 1 : 0; break;
        case ResizeNearest::kFloor: break;
        case ResizeNearest::kCeil: i += 1; break;
      }
    }
    index[0] = clamp_index(i, a.in);
    weight[0] = 1.f;
    return;
  }
  double w[4];
  int64_t first;
  int taps;
  if (p.mode == ResizeMode::kLinear) {
    first = i0;
    taps = 2;
    w[0] = 1 - t;
    w[1] = t;
  } else {
    const double A = p.cubic_coeff_a, u = t + 1, v = 1 - t, z = 2 - t;
    first = i0 - 1;
    taps = 4;
    w[0] = ((A * u - 5 * A) * u + 8 * A) * u - 4 * A;
    w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    w[2] = ((A + 2) * v - (A + 3)) * v * v + 1;
    w[3] = ((A * z - 5 * A) * z + 8 * A) * z - 4 * A;
  }
  if (p.exclude_outside) {
    double sum = 0;
    for (int k = 0; k < taps; ++k) {
      if (first + k < 0 || first + k >= a.in) w[k] = 0;
      sum += w[k];
    }
    if (sum != 0) {
      for (int k = 0; k < taps; ++k) w[k] /= sum;
    } else {  // every tap outside: the nearest edge
      for (int k = 0; k < taps; ++k) w[k] = 0;
      w[first < 0 ? taps - 1 : 0] = 1;
    }
  }
  for (int k = 0; k < taps; ++k) {
    index[k] = clamp_index(first + k, a.in);
    weight[k] = static_cast<float>(w[k]);
  }
}

uint64_t resize_table_bytes(const ResizeShape& s) {
  const uint64_t k = static_cast<uint64_t>(resize_taps(s.params.mode));
  return 4 * (4 * static_cast<uint64_t>(s.h.out) * k + 2 * static_cast<uint64_t>(s.w.out) * k + static_cast<uint64_t>(s.h.in) + 1);
}

ResizeTables resize_build_tables(const ResizeShape& s, void* storage) {
  ResizeTables t;
  t.taps = resize_taps(s.params.mode);
  const size_t k = static_cast<size_t>(t.taps), hk = static_cast<size_t>(s.h.out) * k, wk = static_cast<size_t>(s.w.out) * k;
  const size_t in_h = static_cast<size_t>(s.h.in);
  // Every array holds 4-byte values: int32 and float share one cursor.
  char* at = static_cast<char*>(storage);
  auto take = [&at](size_t count) {
    char* p = at;
    at += count * 4;
    return p;
  };
  auto* h_index = reinterpret_cast<int32_t*>(take(hk));
  auto* h_weight = reinterpret_cast<float*>(take(hk));
  auto* w_index = reinterpret_cast<int32_t*>(take(wk));
  auto* w_weight = reinterpret_cast<float*>(take(wk));
  auto* begin = reinterpret_cast<int32_t*>(take(in_h + 1));
  auto* row = reinterpret_cast<int32_t*>(take(hk));
  auto* weight = reinterpret_cast<float*>(take(hk));
  for (int64_t o = 0; o < s.h.out; ++o) resize_axis_taps(s.h, s.params, o, h_index + static_cast<size_t>(o) * k, h_weight + static_cast<size_t>(o) * k);
  for (int64_t o = 0; o < s.w.out; ++o) resize_axis_taps(s.w, s.params, o, w_index + static_cast<size_t>(o) * k, w_weight + static_cast<size_t>(o) * k);
  // Transposed H table by counting sort on the input row, keeping (output row, tap) order;
  // zero weights are left out. begin[i] is used as row i's fill cursor, then shifted back.
  std::fill(begin, begin + in_h + 1, 0);
  for (size_t e = 0; e < hk; ++e)
    if (h_weight[e] != 0.f) begin[static_cast<size_t>(h_index[e]) + 1]++;
  for (size_t i = 0; i < in_h; ++i) begin[i + 1] += begin[i];
  for (size_t e = 0; e < hk; ++e) {
    if (h_weight[e] == 0.f) continue;
    const size_t slot = static_cast<size_t>(begin[static_cast<size_t>(h_index[e])]++);
    row[slot] = static_cast<int32_t>(e / k);
    weight[slot] = h_weight[e];
  }
  for (size_t i = in_h; i > 0; --i) begin[i] = begin[i - 1];
  begin[0] = 0;
  t.h_index = h_index;
  t.h_weight = h_weight;
  t.w_index = w_index;
  t.w_weight = w_weight;
  t.h_readers_begin = begin;
  t.h_reader_row = row;
  t.h_reader_weight = weight;
  return t;
}

}  // namespace edgegan::kernels

#include "kernels_cpu/resize/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels_cpu/common/thread_index.h"

namespace edgegan::cpu {
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

void resize_reference(const ResizeShape& s, const float* x, float* y) {
  const int64_t c = s.channels;
  int32_t hi[4], wi[4];
  float hw[4], ww[4];
  const int taps = resize_taps(s.params.mode);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh) {
      resize_axis_taps(s.h, s.params, oh, hi, hw);
      for (int64_t ow = 0; ow < s.w.out; ++ow) {
        resize_axis_taps(s.w, s.params, ow, wi, ww);
        for (int64_t k = 0; k < c; ++k) {
          double acc = 0;
          for (int i = 0; i < taps; ++i)
            for (int j = 0; j < taps; ++j)
              acc += static_cast<double>(hw[i]) * ww[j] * x[((n * s.h.in + hi[i]) * s.w.in + wi[j]) * c + k];
          y[((n * s.h.out + oh) * s.w.out + ow) * c + k] = static_cast<float>(acc);
        }
      }
    }
}

int64_t resize_workspace(const ResizeShape& s, int threads) {
  return s.params.mode == ResizeMode::kNearest ? 0 : static_cast<int64_t>(std::max(threads, 1)) * s.w.in * s.channels;
}

void resize(const ResizeShape& s, const ResizeTables& t, const float* x, float* y, float* workspace, int threads) {
  const int64_t c = s.channels, rows = s.batch * s.h.out, in_row = s.w.in * c, out_row = s.w.out * c;
  const int taps = t.taps;
  if (s.params.mode == ResizeMode::kNearest) {
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && rows > 1)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / s.h.out, oh = r % s.h.out;
      const float* src = x + (n * s.h.in + t.h_index[static_cast<size_t>(oh)]) * in_row;
      float* out = y + r * out_row;
      for (int64_t ow = 0; ow < s.w.out; ++ow)
        std::memcpy(out + ow * c, src + t.w_index[static_cast<size_t>(ow)] * c, static_cast<size_t>(c) * sizeof(float));
    }
    return;
  }
  std::vector<float> own;
  if (!workspace) {
    own.resize(static_cast<size_t>(resize_workspace(s, threads)));
    workspace = own.data();
  }
#pragma omp parallel num_threads(threads) if (threads > 1 && rows > 1)
  {
    const int thread = thread_index();
    float* __restrict blend = workspace + thread * in_row;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / s.h.out, oh = r % s.h.out;
      const int32_t* hi = &t.h_index[static_cast<size_t>(oh * taps)];
      const float* hw = &t.h_weight[static_cast<size_t>(oh * taps)];
      // The H taps blend whole input rows.
      {
        const float* __restrict src = x + (n * s.h.in + hi[0]) * in_row;
        const float w = hw[0];
        for (int64_t i = 0; i < in_row; ++i) blend[i] = w * src[i];
      }
      for (int k = 1; k < taps; ++k) {
        const float* __restrict src = x + (n * s.h.in + hi[k]) * in_row;
        const float w = hw[k];
        for (int64_t i = 0; i < in_row; ++i) blend[i] += w * src[i];
      }
      // Then each output pixel blends its W taps of that row.
      float* out = y + r * out_row;
      for (int64_t ow = 0; ow < s.w.out; ++ow) {
        const int32_t* wi = &t.w_index[static_cast<size_t>(ow * taps)];
        const float* ww = &t.w_weight[static_cast<size_t>(ow * taps)];
        float* __restrict o = out + ow * c;
        {
          const float* __restrict src = blend + wi[0] * c;
          const float w = ww[0];
          for (int64_t k = 0; k < c; ++k) o[k] = w * src[k];
        }
        for (int j = 1; j < taps; ++j) {
          const float* __restrict src = blend + wi[j] * c;
          const float w = ww[j];
          for (int64_t k = 0; k < c; ++k) o[k] += w * src[k];
        }
      }
    }
  }
}

void resize_backward(const ResizeShape& s, const ResizeTables& t, const float* dy, float* dx, bool accumulate, int threads) {
  const int64_t c = s.channels, rows = s.batch * s.h.in, in_row = s.w.in * c, out_row = s.w.out * c;
  const int taps = t.taps;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / s.h.in, ih = r % s.h.in;
    float* d = dx + r * in_row;
    if (!accumulate) std::fill(d, d + in_row, 0.f);
    for (int32_t e = t.h_readers_begin[static_cast<size_t>(ih)]; e < t.h_readers_begin[static_cast<size_t>(ih) + 1]; ++e) {
      const float wh = t.h_reader_weight[static_cast<size_t>(e)];
      const float* g = dy + (n * s.h.out + t.h_reader_row[static_cast<size_t>(e)]) * out_row;
      for (int64_t ow = 0; ow < s.w.out; ++ow) {
        const float* __restrict src = g + ow * c;
        for (int j = 0; j < taps; ++j) {
          const float w = wh * t.w_weight[static_cast<size_t>(ow * taps + j)];
          float* __restrict dst = d + t.w_index[static_cast<size_t>(ow * taps + j)] * c;
          for (int64_t k = 0; k < c; ++k) dst[k] += w * src[k];
        }
      }
    }
  }
}

}  // namespace edgegan::cpu

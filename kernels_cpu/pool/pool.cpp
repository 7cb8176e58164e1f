#include "kernels_cpu/pool/pool.h"

#include <algorithm>
#include <limits>

namespace edgegan::cpu {
namespace {

// Taps of one axis's window at output o that fall inside the input: t in [first, last).
struct TapRange {
  int64_t first = 0, last = 0;
};

TapRange valid_taps(const ConvAxis& a, int64_t o) {
  const int64_t start = o * a.stride - a.pad_begin;
  TapRange r;
  // smallest t with start + t*d >= 0
  r.first = start >= 0 ? 0 : (-start + a.dilation - 1) / a.dilation;
  // first t with start + t*d >= in
  const int64_t past = a.in - start <= 0 ? 0 : (a.in - start + a.dilation - 1) / a.dilation;
  r.last = std::min(a.kernel, past);
  if (r.last < r.first) r.last = r.first;
  return r;
}

// Taps t of one axis through which some output's window reaches input i:
// 0 <= (i + pad_begin - t*dilation) / stride < out, so only those are visited (a global
// pool's input pixel is tap i of the one window, not a scan of the whole kernel).
TapRange covering_taps(const ConvAxis& a, int64_t i) {
  const int64_t hi = i + a.pad_begin;                       // t*d <= hi
  const int64_t lo = hi - (a.out - 1) * a.stride;           // t*d >= lo
  TapRange r;
  r.first = lo <= 0 ? 0 : (lo + a.dilation - 1) / a.dilation;
  r.last = hi < 0 ? 0 : std::min(a.kernel, hi / a.dilation + 1);
  if (r.last < r.first) r.last = r.first;
  return r;
}

// The average's divisor along one axis: taps inside the input, or (count_include_pad)
// inside the padded input [-pad_begin, in + pad_end).
int64_t axis_count(const ConvAxis& a, int64_t o, bool include_pad) {
  if (!include_pad) {
    const TapRange r = valid_taps(a, o);
    return r.last - r.first;
  }
  const int64_t start = o * a.stride - a.pad_begin;
  const int64_t end = std::min(start + (a.kernel - 1) * a.dilation + 1, a.in + a.pad_end);
  return (end - start + a.dilation - 1) / a.dilation;
}

inline bool takes(float v, float m) { return v > m || v != v; }  // PyTorch: larger, or NaN

// One output pixel: y[c] over the window, vectorised over channels.
void pool_pixel(const PoolShape& s, PoolKind kind, bool include_pad, const float* xs, int64_t oh, int64_t ow, float* y) {
  const int64_t c = s.channels;
  const TapRange th = valid_taps(s.h, oh), tw = valid_taps(s.w, ow);
  const int64_t h0 = oh * s.h.stride - s.h.pad_begin, w0 = ow * s.w.stride - s.w.pad_begin;
  if (kind == PoolKind::kMax) {
    if (th.first == th.last || tw.first == tw.last) {  // a window entirely in the padding
      std::fill(y, y + c, 0.f);
      return;
    }
    std::fill(y, y + c, -std::numeric_limits<float>::infinity());
    for (int64_t kh = th.first; kh < th.last; ++kh)
      for (int64_t kw = tw.first; kw < tw.last; ++kw) {
        const float* xp = xs + ((h0 + kh * s.h.dilation) * s.w.in + (w0 + kw * s.w.dilation)) * c;
        for (int64_t k = 0; k < c; ++k) y[k] = takes(xp[k], y[k]) ? xp[k] : y[k];
      }
    return;
  }
  std::fill(y, y + c, 0.f);
  for (int64_t kh = th.first; kh < th.last; ++kh)
    for (int64_t kw = tw.first; kw < tw.last; ++kw) {
      const float* xp = xs + ((h0 + kh * s.h.dilation) * s.w.in + (w0 + kw * s.w.dilation)) * c;
      for (int64_t k = 0; k < c; ++k) y[k] += xp[k];
    }
  const int64_t count = axis_count(s.h, oh, include_pad) * axis_count(s.w, ow, include_pad);
  const float inv = count > 0 ? 1.f / static_cast<float>(count) : 0.f;
  for (int64_t k = 0; k < c; ++k) y[k] *= inv;
}

// The argmax of window (oh, ow) for channel k: the input pixel index (h*W + w), or -1.
int64_t argmax(const PoolShape& s, const float* xs, int64_t oh, int64_t ow, int64_t k) {
  const TapRange th = valid_taps(s.h, oh), tw = valid_taps(s.w, ow);
  const int64_t h0 = oh * s.h.stride - s.h.pad_begin, w0 = ow * s.w.stride - s.w.pad_begin;
  int64_t best = -1;
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t kh = th.first; kh < th.last; ++kh)
    for (int64_t kw = tw.first; kw < tw.last; ++kw) {
      const int64_t p = (h0 + kh * s.h.dilation) * s.w.in + (w0 + kw * s.w.dilation);
      const float v = xs[p * s.channels + k];
      if (best < 0 || takes(v, m)) {
        if (best >= 0 && m != m) continue;  // the first NaN stays
        best = p;
        m = v;
      }
    }
  return best;
}

}  // namespace

void pool_reference(const PoolShape& s, PoolKind kind, bool include_pad, const float* x, float* y) {
  const int64_t c = s.channels;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh)
      for (int64_t ow = 0; ow < s.w.out; ++ow)
        for (int64_t k = 0; k < c; ++k) {
          double sum = 0;
          float m = 0;
          bool any = false;
          for (int64_t kh = 0; kh < s.h.kernel; ++kh)
            for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
              const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
              const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
              if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
              const float v = x[((n * s.h.in + ih) * s.w.in + iw) * c + k];
              sum += v;
              if (!any || (m == m && (v > m || v != v))) m = v;
              any = true;
            }
          float& out = y[((n * s.h.out + oh) * s.w.out + ow) * c + k];
          if (kind == PoolKind::kMax) {
            out = any ? m : 0.f;
          } else {
            const int64_t count = axis_count(s.h, oh, include_pad) * axis_count(s.w, ow, include_pad);
            out = count > 0 ? static_cast<float>(sum / static_cast<double>(count)) : 0.f;
          }
        }
}

void pool(const PoolShape& s, PoolKind kind, bool include_pad, const float* x, float* y, int threads) {
  const int64_t rows = s.batch * s.h.out;
  const int64_t in_sample = s.h.in * s.w.in * s.channels;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / s.h.out, oh = r % s.h.out;
    float* yr = y + r * s.w.out * s.channels;
    for (int64_t ow = 0; ow < s.w.out; ++ow) pool_pixel(s, kind, include_pad, x + n * in_sample, oh, ow, yr + ow * s.channels);
  }
}

void pool_backward(const PoolShape& s, PoolKind kind, bool include_pad, const float* x, const float* dy, float* dx, int threads) {
  const int64_t c = s.channels;
  const int64_t in_sample = s.h.in * s.w.in * c, out_sample = s.h.out * s.w.out * c;
  if (kind == PoolKind::kMax) {
    constexpr int64_t kBlock = 16;
    const int64_t blocks = (c + kBlock - 1) / kBlock, tasks = s.batch * blocks;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t n = t / blocks, k0 = (t % blocks) * kBlock, k1 = std::min(c, k0 + kBlock);
      const float* xs = x + n * in_sample;
      float* dxs = dx + n * in_sample;
      for (int64_t p = 0; p < s.h.in * s.w.in; ++p) std::fill(dxs + p * c + k0, dxs + p * c + k1, 0.f);
      for (int64_t oh = 0; oh < s.h.out; ++oh)
        for (int64_t ow = 0; ow < s.w.out; ++ow) {
          const float* g = dy + n * out_sample + (oh * s.w.out + ow) * c;
          for (int64_t k = k0; k < k1; ++k) {
            const int64_t p = argmax(s, xs, oh, ow, k);
            if (p >= 0) dxs[p * c + k] += g[k];
          }
        }
    }
    return;
  }
  // Average: gather. Input i on an axis is tap t of output o when o*stride = i + pad_begin - t*dilation.
  const int64_t rows = s.batch * s.h.in;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / s.h.in, ih = r % s.h.in;
    for (int64_t iw = 0; iw < s.w.in; ++iw) {
      float* d = dx + (r * s.w.in + iw) * c;
      std::fill(d, d + c, 0.f);
      const TapRange rh = covering_taps(s.h, ih), rw = covering_taps(s.w, iw);
      for (int64_t kh = rh.first; kh < rh.last; ++kh) {
        const int64_t ph = ih + s.h.pad_begin - kh * s.h.dilation;
        if (ph < 0 || ph % s.h.stride != 0 || ph / s.h.stride >= s.h.out) continue;
        const int64_t oh = ph / s.h.stride;
        for (int64_t kw = rw.first; kw < rw.last; ++kw) {
          const int64_t pw = iw + s.w.pad_begin - kw * s.w.dilation;
          if (pw < 0 || pw % s.w.stride != 0 || pw / s.w.stride >= s.w.out) continue;
          const int64_t ow = pw / s.w.stride;
          const int64_t count = axis_count(s.h, oh, include_pad) * axis_count(s.w, ow, include_pad);
          const float inv = count > 0 ? 1.f / static_cast<float>(count) : 0.f;
          const float* g = dy + n * out_sample + (oh * s.w.out + ow) * c;
          for (int64_t k = 0; k < c; ++k) d[k] += g[k] * inv;
        }
      }
    }
  }
}

void pool_backward_reference(const PoolShape& s, PoolKind kind, bool include_pad, const float* x, const float* dy, float* dx) {
  const int64_t c = s.channels;
  std::fill(dx, dx + s.batch * s.h.in * s.w.in * c, 0.f);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh)
      for (int64_t ow = 0; ow < s.w.out; ++ow)
        for (int64_t k = 0; k < c; ++k) {
          const float g = dy[((n * s.h.out + oh) * s.w.out + ow) * c + k];
          const int64_t count = axis_count(s.h, oh, include_pad) * axis_count(s.w, ow, include_pad);
          int64_t best = -1;
          float m = 0;
          for (int64_t kh = 0; kh < s.h.kernel; ++kh)
            for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
              const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
              const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
              if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
              const int64_t i = ((n * s.h.in + ih) * s.w.in + iw) * c + k;
              if (kind == PoolKind::kAverage) {
                dx[i] += g / static_cast<float>(count);
              } else if (best < 0 || (m == m && (x[i] > m || x[i] != x[i]))) {
                best = i;
                m = x[i];
              }
            }
          if (kind == PoolKind::kMax && best >= 0) dx[best] += g;
        }
}

}  // namespace edgegan::cpu

#include "kernels_cpu/conv2d/conv2d_grouped.h"

#include <algorithm>
#include <vector>

#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/common/workspace.h"

namespace edgegan::cpu {

// ---------------------------------------------------------------- reference

void conv2d_grouped_reference(const ConvShape& s, int64_t groups, const float* x, const float* w, float* y, const Epilogue& ep) {
  const int64_t cin = s.in_channels, cout = s.out_channels, cin_g = cin / groups, cout_g = cout / groups;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh)
      for (int64_t ow = 0; ow < s.w.out; ++ow)
        for (int64_t co = 0; co < cout; ++co) {
          const int64_t c0 = co / cout_g * cin_g;
          float acc = ep.bias ? ep.bias[co] : 0.f;
          for (int64_t kh = 0; kh < s.h.kernel; ++kh)
            for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
              const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
              const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
              if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
              for (int64_t ci = 0; ci < cin_g; ++ci)
                acc += x[((n * s.h.in + ih) * s.w.in + iw) * cin + c0 + ci] * w[((co * cin_g + ci) * s.h.kernel + kh) * s.w.kernel + kw];
            }
          const int64_t i = ((n * s.h.out + oh) * s.w.out + ow) * cout + co;
          y[i] = ep.activate(acc, co);
          if (ep.residual) y[i] += ep.residual[i];
        }
}

void conv2d_grouped_backward_reference(const ConvShape& s, int64_t groups, const float* x, const float* w, const float* dy, float* dx,
                                       float* dw, float* db) {
  const int64_t cin = s.in_channels, cout = s.out_channels, cin_g = cin / groups, cout_g = cout / groups;
  if (dx) std::fill(dx, dx + s.batch * s.h.in * s.w.in * cin, 0.f);
  if (dw) std::fill(dw, dw + cout * cin_g * s.h.kernel * s.w.kernel, 0.f);
  if (db) bias_backward(s.batch * s.h.out * s.w.out, cout, dy, db);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh)
      for (int64_t ow = 0; ow < s.w.out; ++ow)
        for (int64_t kh = 0; kh < s.h.kernel; ++kh)
          for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
            const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
            const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
            if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
            const float* g = dy + ((n * s.h.out + oh) * s.w.out + ow) * cout;
            for (int64_t co = 0; co < cout; ++co)
              for (int64_t ci = 0; ci < cin_g; ++ci) {
                const int64_t wi = ((co * cin_g + ci) * s.h.kernel + kh) * s.w.kernel + kw;
                const int64_t xi = ((n * s.h.in + ih) * s.w.in + iw) * cin + co / cout_g * cin_g + ci;
                if (dx) dx[xi] += g[co] * w[wi];
                if (dw) dw[wi] += x[xi] * g[co];
              }
          }
}

void pack_conv2d_grouped_weights(const ConvShape& s, int64_t groups, const float* w, float* packed) {
  const int64_t cin_g = s.in_channels / groups, cout = s.out_channels;
  for (int64_t kh = 0; kh < s.h.kernel; ++kh)
    for (int64_t kw = 0; kw < s.w.kernel; ++kw)
      for (int64_t ci = 0; ci < cin_g; ++ci)
        for (int64_t co = 0; co < cout; ++co)
          packed[((kh * s.w.kernel + kw) * cin_g + ci) * cout + co] = w[((co * cin_g + ci) * s.h.kernel + kh) * s.w.kernel + kw];
}

// ---------------------------------------------------------------- depthwise

namespace {

// Taps [lo, hi) of one axis whose input o*stride - pad + t*dilation lies in [0, in).
inline void valid_taps(const ConvAxis& a, int64_t o, int64_t& lo, int64_t& hi) {
  const int64_t base = o * a.stride - a.pad_begin;
  lo = base >= 0 ? 0 : (-base + a.dilation - 1) / a.dilation;
  hi = base >= a.in ? 0 : std::min(a.kernel, (a.in - 1 - base) / a.dilation + 1);
  if (hi < lo) hi = lo;
}

}  // namespace

void conv2d_depthwise(const ConvShape& s, const float* w, const float* x, float* y, const Epilogue& ep, int threads, const ConvInputMap* map) {
  const int64_t c = s.in_channels, cout = s.out_channels, mult = cout / c, rows = s.batch * s.h.out;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / s.h.out, oh = r % s.h.out;
    int64_t kh0, kh1;
    valid_taps(s.h, oh, kh0, kh1);
    float* row = y + r * s.w.out * cout;
    for (int64_t ow = 0; ow < s.w.out; ++ow) {
      float* __restrict out = row + ow * cout;
      if (ep.bias) std::copy(ep.bias, ep.bias + cout, out);
      else std::fill(out, out + cout, 0.f);
      int64_t kw0, kw1;
      valid_taps(s.w, ow, kw0, kw1);
      for (int64_t kh = kh0; kh < kh1; ++kh) {
        const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
        for (int64_t kw = kw0; kw < kw1; ++kw) {
          const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
          const float* __restrict xp = conv_input_pixel(x, map, s.h.in, s.w.in, c, n, ih, iw);
          const float* __restrict wp = w + (kh * s.w.kernel + kw) * cout;
          if (mult == 1) {
            for (int64_t k = 0; k < c; ++k) out[k] += xp[k] * wp[k];
          } else {
            for (int64_t k = 0; k < c; ++k)
              for (int64_t j = 0; j < mult; ++j) out[k * mult + j] += xp[k] * wp[k * mult + j];
          }
        }
      }
    }
    finish_epilogue(row, r * s.w.out, s.w.out, cout, ep);  // activation, then the residual (if any)
  }
}

void conv2d_depthwise_backward_input(const ConvShape& s, const float* w, const float* dy, float* dx, int threads) {
  const int64_t c = s.in_channels, cout = s.out_channels, mult = cout / c, rows = s.batch * s.h.in;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / s.h.in, ih = r % s.h.in;
    for (int64_t iw = 0; iw < s.w.in; ++iw) {
      float* __restrict d = dx + (r * s.w.in + iw) * c;
      std::fill(d, d + c, 0.f);
      for (int64_t kh = 0; kh < s.h.kernel; ++kh) {
        const int64_t th = ih + s.h.pad_begin - kh * s.h.dilation;
        if (th < 0 || th % s.h.stride != 0 || th / s.h.stride >= s.h.out) continue;
        const int64_t oh = th / s.h.stride;
        for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
          const int64_t tw = iw + s.w.pad_begin - kw * s.w.dilation;
          if (tw < 0 || tw % s.w.stride != 0 || tw / s.w.stride >= s.w.out) continue;
          const int64_t ow = tw / s.w.stride;
          const float* __restrict g = dy + ((n * s.h.out + oh) * s.w.out + ow) * cout;
          const float* __restrict wp = w + (kh * s.w.kernel + kw) * cout;
          if (mult == 1) {
            for (int64_t k = 0; k < c; ++k) d[k] += g[k] * wp[k];
          } else {
            for (int64_t k = 0; k < c; ++k) {
              float acc = 0.f;
              for (int64_t j = 0; j < mult; ++j) acc += g[k * mult + j] * wp[k * mult + j];
              d[k] += acc;
            }
          }
        }
      }
    }
  }
}

void conv2d_depthwise_backward_weights(const ConvShape& s, const float* x, const float* dy, float* dw, int threads) {
  const int64_t c = s.in_channels, cout = s.out_channels, mult = cout / c, taps = s.h.kernel * s.w.kernel;
  // Blocks of output channels: each owns its columns of dW and sums every pixel into
  // them in the same order, whatever thread runs it.
  constexpr int64_t kBlock = 16;
  const int64_t blocks = (cout + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t c0 = b * kBlock, c1 = std::min(cout, c0 + kBlock);
    for (int64_t t = 0; t < taps; ++t) std::fill(dw + t * cout + c0, dw + t * cout + c1, 0.f);
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t oh = 0; oh < s.h.out; ++oh) {
        int64_t kh0, kh1;
        valid_taps(s.h, oh, kh0, kh1);
        for (int64_t ow = 0; ow < s.w.out; ++ow) {
          int64_t kw0, kw1;
          valid_taps(s.w, ow, kw0, kw1);
          const float* __restrict g = dy + ((n * s.h.out + oh) * s.w.out + ow) * cout;
          for (int64_t kh = kh0; kh < kh1; ++kh) {
            const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
            for (int64_t kw = kw0; kw < kw1; ++kw) {
              const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
              const float* __restrict xp = x + ((n * s.h.in + ih) * s.w.in + iw) * c;
              float* __restrict d = dw + (kh * s.w.kernel + kw) * cout;
              if (mult == 1) {
                for (int64_t k = c0; k < c1; ++k) d[k] += xp[k] * g[k];
              } else {
                for (int64_t k = c0; k < c1; ++k) d[k] += xp[k / mult] * g[k];
              }
            }
          }
        }
      }
  }
}

// ---------------------------------------------------------------- grouped

ConvShape conv2d_group_shape(const ConvShape& s, int64_t groups) {
  ConvShape g = s;
  g.in_channels = s.in_channels / groups;
  g.out_channels = s.out_channels / groups;
  return g;
}

namespace {

// dst[p][0..width) = src[p*src_stride + 0..width) (+ add[p*dst_stride + 0..width) when
// given: a residual laid out as dst) for `pixels` pixels.
void copy_channels(int64_t pixels, int64_t width, const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int threads,
                   const float* add = nullptr) {
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && pixels * width > 32768)
  for (int64_t p = 0; p < pixels; ++p) {
    if (!add) {
      std::copy(src + p * src_stride, src + p * src_stride + width, dst + p * dst_stride);
      continue;
    }
    const float* s = src + p * src_stride;
    const float* r = add + p * dst_stride;
    float* d = dst + p * dst_stride;
    for (int64_t c = 0; c < width; ++c) d[c] = s[c] + r[c];
  }
}

struct GroupSizes {
  int64_t x, y, w, inner;
};

GroupSizes forward_sizes(const ConvShape& s, int64_t groups, int threads) {
  const ConvShape g = conv2d_group_shape(s, groups);
  return {s.batch * s.h.in * s.w.in * g.in_channels, s.batch * s.h.out * s.w.out * g.out_channels,
          s.h.kernel * s.w.kernel * g.in_channels * g.out_channels, conv2d_trimmed_workspace(g, threads)};
}

}  // namespace

int64_t conv2d_grouped_workspace(const ConvShape& s, int64_t groups, int threads) {
  const GroupSizes z = forward_sizes(s, groups, threads);
  return z.x + z.y + z.w + z.inner;
}

void conv2d_grouped(const ConvShape& s, int64_t groups, const float* packed, const float* x, float* y, const Epilogue& ep, int threads,
                    float* workspace, const ConvInputMap* map) {
  const ConvShape gs = conv2d_group_shape(s, groups);
  const GroupSizes z = forward_sizes(s, groups, threads);
  std::vector<float> own;
  float* ws = workspace_or_own(workspace, z.x + z.y + z.w + z.inner, own);
  float* xg = ws;
  float* yg = xg + z.x;
  float* wg = yg + z.y;
  float* inner = wg + z.w;
  // With a map, the group's copy is of the physical input (no larger than the map), read through the map.
  const int64_t in_pixels = map ? s.batch * map->src_h * map->src_w : s.batch * s.h.in * s.w.in, out_pixels = s.batch * s.h.out * s.w.out;
  const int64_t cin_g = gs.in_channels, cout_g = gs.out_channels, rows = s.h.kernel * s.w.kernel * cin_g;
  for (int64_t g = 0; g < groups; ++g) {
    copy_channels(in_pixels, cin_g, x + g * cin_g, s.in_channels, xg, cin_g, threads);
    copy_channels(rows, cout_g, packed + g * cout_g, s.out_channels, wg, cout_g, 1);
    Epilogue e = ep.from_column(g * cout_g);
    e.residual = nullptr;  // added as the group's channels are scattered into y
    conv2d_trimmed(gs, wg, xg, yg, e, threads, z.inner > 0 ? inner : nullptr, map);
    copy_channels(out_pixels, cout_g, yg, cout_g, y + g * cout_g, s.out_channels, threads, ep.residual ? ep.residual + g * cout_g : nullptr);
  }
}

int64_t conv2d_grouped_backward_workspace(const ConvShape& s, int64_t groups, int threads) {
  const ConvShape gs = conv2d_group_shape(s, groups);
  const GroupSizes z = forward_sizes(s, groups, threads);
  // x_g, dy_g, w_g, dw_g, dx_g, then the ungrouped kernels' scratch.
  return z.x + z.y + 2 * z.w + z.x +
         std::max(conv2d_backward_weights_workspace(gs, threads), conv2d_backward_input_workspace(gs, threads));
}

void conv2d_grouped_backward(const ConvShape& s, int64_t groups, ConvInputGradient& view, const float* packed, const float* x,
                             const float* dy, float* dx, float* dw, float* workspace, int64_t workspace_floats, int threads) {
  const ConvShape gs = conv2d_group_shape(s, groups);
  const GroupSizes z = forward_sizes(s, groups, threads);
  const int64_t need = conv2d_grouped_backward_workspace(s, groups, threads);
  std::vector<float> own;
  float* ws = workspace_or_own(workspace, workspace_floats, need, own);
  float* xg = ws;
  float* dyg = xg + z.x;
  float* wg = dyg + z.y;
  float* dwg = wg + z.w;
  float* dxg = dwg + z.w;
  float* inner = dxg + z.x;
  const int64_t inner_floats = need - (inner - ws);
  const int64_t in_pixels = s.batch * s.h.in * s.w.in, out_pixels = s.batch * s.h.out * s.w.out;
  const int64_t cin_g = gs.in_channels, cout_g = gs.out_channels, rows = s.h.kernel * s.w.kernel * cin_g;
  for (int64_t g = 0; g < groups; ++g) {
    copy_channels(out_pixels, cout_g, dy + g * cout_g, s.out_channels, dyg, cout_g, threads);
    if (dw) {
      copy_channels(in_pixels, cin_g, x + g * cin_g, s.in_channels, xg, cin_g, threads);
      conv2d_backward_weights(gs, xg, dyg, dwg, threads, inner);
      copy_channels(rows, cout_g, dwg, cout_g, dw + g * cout_g, s.out_channels, 1);
    }
    if (dx) {
      copy_channels(rows, cout_g, packed + g * cout_g, s.out_channels, wg, cout_g, 1);
      conv2d_backward_input(view, wg, dyg, dxg, inner, inner_floats, threads);
      copy_channels(in_pixels, cin_g, dxg, cin_g, dx + g * cin_g, s.in_channels, threads);
    }
  }
}

}  // namespace edgegan::cpu

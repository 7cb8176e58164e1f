#include "kernels_cpu/sliding_channel_conv/sliding_channel_conv.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/common/thread_index.h"
#include "kernels_cpu/sliding_channel_conv/sliding_channel_conv_ukernel.h"

namespace edgegan::cpu {
namespace {
#include "kernels_cpu/sliding_channel_conv/sliding_channel_conv_ukernel.inc"
}  // namespace

namespace {

constexpr SlidingChannelUkernels kScalar{forward_tile, input_tiles, weights_chunk};
constexpr int64_t kTile = kSlidingChannelTile;  // pixels per tile (the vector axis)
constexpr int64_t kInputTile = kSlidingChannelInputTile;
constexpr int64_t kBlock = 16;                  // output channels per dW task

int64_t taps(const ConvShape& s) { return s.h.kernel * s.w.kernel; }

}  // namespace

const SlidingChannelUkernels& sliding_channel_ukernels(Isa isa) {
#if defined(EDGEGAN_HAVE_X86_KERNELS)
  if (isa == Isa::kAvx512) return kSlidingChannelAvx512;
  if (isa == Isa::kAvx2) return kSlidingChannelAvx2;
#endif
  (void)isa;
  return kScalar;
}

const SlidingChannelUkernels& sliding_channel_ukernels() { return sliding_channel_ukernels(active_isa()); }

int64_t sliding_channel_conv_period(int64_t in_channels, int64_t out_channels, int64_t start_stride) {
  const int64_t s = start_stride % in_channels;
  const int64_t period = s == 0 ? 1 : in_channels / std::gcd(in_channels, s);
  return std::max<int64_t>(1, std::min(period, out_channels));
}

std::vector<int32_t> sliding_channel_conv_starts(int64_t in_channels, int64_t out_channels, int64_t start_stride) {
  std::vector<int32_t> starts(static_cast<size_t>(sliding_channel_conv_period(in_channels, out_channels, start_stride)));
  for (size_t p = 0; p < starts.size(); ++p) starts[p] = static_cast<int32_t>((static_cast<int64_t>(p) * start_stride) % in_channels);
  return starts;
}

SlidingChannelPlan plan_sliding_channel_conv(const ConvShape& shape, int64_t window, std::vector<int32_t> starts) {
  SlidingChannelPlan plan;
  plan.shape = shape;
  plan.window = window;
  plan.starts = std::move(starts);
  const int64_t cin = shape.in_channels;
  plan.cover_offsets.assign(static_cast<size_t>(cin + 1), 0);
  for (int32_t s : plan.starts)
    for (int64_t j = 0; j < window; ++j) ++plan.cover_offsets[static_cast<size_t>((s + j) % cin + 1)];
  for (int64_t c = 0; c < cin; ++c) plan.cover_offsets[static_cast<size_t>(c + 1)] += plan.cover_offsets[static_cast<size_t>(c)];
  const size_t entries = static_cast<size_t>(plan.cover_offsets.back());
  plan.cover_p.resize(entries);
  plan.cover_j.resize(entries);
  std::vector<int32_t> fill(plan.cover_offsets.begin(), plan.cover_offsets.end() - 1);
  for (size_t p = 0; p < plan.starts.size(); ++p)
    for (int64_t j = 0; j < window; ++j) {
      const size_t at = static_cast<size_t>(fill[static_cast<size_t>((plan.starts[p] + j) % cin)]++);
      plan.cover_p[at] = static_cast<int32_t>(p);
      plan.cover_j[at] = static_cast<int32_t>(j);
    }
  return plan;
}

// ---- reference

void sliding_channel_conv_reference(const SlidingChannelPlan& plan, const float* x, const float* w, float* y, const Epilogue& ep) {
  const ConvShape& s = plan.shape;
  const int64_t cin = s.in_channels, cout = s.out_channels, gw = plan.window;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh)
      for (int64_t ow = 0; ow < s.w.out; ++ow)
        for (int64_t o = 0; o < cout; ++o) {
          double acc = ep.bias ? ep.bias[o] : 0.0;
          for (int64_t j = 0; j < gw; ++j) {
            const int64_t c = (plan.start(o) + j) % cin;
            for (int64_t kh = 0; kh < s.h.kernel; ++kh)
              for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
                const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
                const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
                if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
                acc += static_cast<double>(w[((o * gw + j) * s.h.kernel + kh) * s.w.kernel + kw]) *
                       x[((n * s.h.in + ih) * s.w.in + iw) * cin + c];
              }
          }
          y[((n * s.h.out + oh) * s.w.out + ow) * cout + o] = static_cast<float>(acc);
        }
  const int64_t pixels = s.batch * s.h.out * s.w.out;
  if (ep.activation != Activation::kNone) apply_activation(y, pixels, cout, cout, ep.activation, ep.alpha, ep.beta);
}

void sliding_channel_conv_backward_reference(const SlidingChannelPlan& plan, const float* x, const float* w, const float* dy, float* dx,
                                             float* dw, float* db) {
  const ConvShape& s = plan.shape;
  const int64_t cin = s.in_channels, cout = s.out_channels, gw = plan.window;
  if (dx) std::fill(dx, dx + s.batch * s.h.in * s.w.in * cin, 0.f);
  if (dw) std::fill(dw, dw + cout * gw * taps(s), 0.f);
  if (db) std::fill(db, db + cout, 0.f);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oh = 0; oh < s.h.out; ++oh)
      for (int64_t ow = 0; ow < s.w.out; ++ow)
        for (int64_t o = 0; o < cout; ++o) {
          const float g = dy[((n * s.h.out + oh) * s.w.out + ow) * cout + o];
          if (db) db[o] += g;
          for (int64_t j = 0; j < gw; ++j) {
            const int64_t c = (plan.start(o) + j) % cin;
            for (int64_t kh = 0; kh < s.h.kernel; ++kh)
              for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
                const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
                const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
                if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
                const int64_t wi = ((o * gw + j) * s.h.kernel + kh) * s.w.kernel + kw;
                const int64_t xi = ((n * s.h.in + ih) * s.w.in + iw) * cin + c;
                if (dx) dx[xi] += w[wi] * g;
                if (dw) dw[wi] += x[xi] * g;
              }
          }
        }
}

void pack_sliding_channel_conv_weights(const SlidingChannelPlan& plan, const float* onnx, float* packed) {
  const int64_t kk = taps(plan.shape), gw = plan.window;
  for (int64_t o = 0; o < plan.shape.out_channels; ++o)
    for (int64_t j = 0; j < gw; ++j)
      for (int64_t t = 0; t < kk; ++t) packed[(o * kk + t) * gw + j] = onnx[(o * gw + j) * kk + t];
}

void unpack_sliding_channel_conv_weights(const SlidingChannelPlan& plan, const float* packed, float* onnx) {
  const int64_t kk = taps(plan.shape), gw = plan.window;
  for (int64_t o = 0; o < plan.shape.out_channels; ++o)
    for (int64_t j = 0; j < gw; ++j)
      for (int64_t t = 0; t < kk; ++t) onnx[(o * gw + j) * kk + t] = packed[(o * kk + t) * gw + j];
}

// ---- fast kernels

int64_t sliding_channel_conv_workspace(const SlidingChannelPlan& plan, int threads) {
  return std::max(1, threads) * taps(plan.shape) * (plan.shape.in_channels + plan.window) * kTile;
}

int64_t sliding_channel_conv_backward_workspace(const SlidingChannelPlan& plan, int threads) {
  const int64_t input = kSlidingChannelInputGroup * taps(plan.shape) * plan.shape.out_channels * kInputTile;
  const int64_t weights = kSlidingChannelWeightPixels * (plan.shape.in_channels + plan.window);
  return std::max(1, threads) * std::max(input, weights);
}

void sliding_channel_conv(const SlidingChannelPlan& plan, int64_t batch, const float* packed, const float* x, float* y, const Epilogue& ep,
                          int threads, float* workspace) {
  const ConvShape& s = plan.shape;
  const int64_t cin = s.in_channels, cout = s.out_channels, gw = plan.window, kk = taps(s);
  const int64_t rows = cin + gw;  // the tile's channel rows: cin.. repeat 0.. for wrapping windows
  const int64_t per_thread = kk * rows * kTile;
  const int64_t row_tiles = (s.w.out + kTile - 1) / kTile;
  const int64_t tiles = batch * s.h.out * row_tiles;
  const SlidingChannelUkernels& uk = sliding_channel_ukernels();
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t tile = 0; tile < tiles; ++tile) {
    float* xt = workspace + static_cast<int64_t>(thread_index()) * per_thread;
    const int64_t n = tile / (s.h.out * row_tiles), oh = tile / row_tiles % s.h.out, ow0 = tile % row_tiles * kTile;
    const int64_t count = std::min(kTile, s.w.out - ow0);
    for (int64_t kh = 0; kh < s.h.kernel; ++kh)
      for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
        float* dst = xt + (kh * s.w.kernel + kw) * rows * kTile;
        const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
        if (ih < 0 || ih >= s.h.in) {
          std::memset(dst, 0, static_cast<size_t>(rows * kTile) * sizeof(float));
          continue;
        }
        for (int64_t t = 0; t < kTile; ++t) {
          const int64_t iw = (ow0 + t) * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
          if (t >= count || iw < 0 || iw >= s.w.in) {
            for (int64_t c = 0; c < rows; ++c) dst[c * kTile + t] = 0.f;
            continue;
          }
          const float* src = x + ((n * s.h.in + ih) * s.w.in + iw) * cin;
          for (int64_t c = 0; c < cin; ++c) dst[c * kTile + t] = src[c];
          for (int64_t c = 0; c < gw; ++c) dst[(cin + c) * kTile + t] = src[c];
        }
      }
    float* yb = y + ((n * s.h.out + oh) * s.w.out + ow0) * cout;
    uk.forward_tile(xt, rows, plan.starts.data(), plan.period(), packed, kk, gw, 0, cout, ep.bias, yb, cout, count);
    if (ep.activation != Activation::kNone) apply_activation(yb, count, cout, cout, ep.activation, ep.alpha, ep.beta);
  }
}

void sliding_channel_conv_backward_input(const SlidingChannelPlan& plan, int64_t batch, const float* packed, const float* dy, float* dx,
                                         int threads, float* workspace) {
  const ConvShape& s = plan.shape;
  const int64_t cin = s.in_channels, cout = s.out_channels, gw = plan.window, kk = taps(s), period = plan.period();
  constexpr int kGroup = kSlidingChannelInputGroup;
  const int64_t tile_floats = kk * cout * kInputTile;
  const int64_t row_tiles = (s.w.in + kInputTile - 1) / kInputTile;
  const int64_t tiles = batch * s.h.in * row_tiles;
  const int64_t groups = (tiles + kGroup - 1) / kGroup;
  const SlidingChannelUkernels& uk = sliding_channel_ukernels();
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t group = 0; group < groups; ++group) {
    float* gt = workspace + static_cast<int64_t>(thread_index()) * kGroup * tile_floats;
    float* xb[kGroup];
    int64_t counts[kGroup];
    const int in_group = static_cast<int>(std::min<int64_t>(kGroup, tiles - group * kGroup));
    for (int b = 0; b < in_group; ++b) {
      const int64_t tile = group * kGroup + b;
      const int64_t n = tile / (s.h.in * row_tiles), ih = tile / row_tiles % s.h.in, iw0 = tile % row_tiles * kInputTile;
      const int64_t count = std::min(kInputTile, s.w.in - iw0);
      // dY of the output pixel each tap of each input pixel of the tile feeds (0 where none).
      for (int64_t kh = 0; kh < s.h.kernel; ++kh)
        for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
          float* dst = gt + b * tile_floats + (kh * s.w.kernel + kw) * cout * kInputTile;
          const int64_t hnum = ih + s.h.pad_begin - kh * s.h.dilation;
          const int64_t oh = hnum / s.h.stride;
          if (hnum < 0 || hnum % s.h.stride != 0 || oh >= s.h.out) {
            std::memset(dst, 0, static_cast<size_t>(cout * kInputTile) * sizeof(float));
            continue;
          }
          for (int64_t t = 0; t < kInputTile; ++t) {
            const int64_t wnum = iw0 + t + s.w.pad_begin - kw * s.w.dilation;
            const int64_t ow = wnum / s.w.stride;
            if (t >= count || wnum < 0 || wnum % s.w.stride != 0 || ow >= s.w.out) {
              for (int64_t o = 0; o < cout; ++o) dst[o * kInputTile + t] = 0.f;
              continue;
            }
            const float* src = dy + ((n * s.h.out + oh) * s.w.out + ow) * cout;
            for (int64_t o = 0; o < cout; ++o) dst[o * kInputTile + t] = src[o];
          }
        }
      xb[b] = dx + ((n * s.h.in + ih) * s.w.in + iw0) * cin;
      counts[b] = count;
    }
    uk.input_tiles(gt, tile_floats, in_group, cout, cin, plan.cover_offsets.data(), plan.cover_p.data(), plan.cover_j.data(), period, packed,
                   kk, gw, xb, counts);
  }
}

void sliding_channel_conv_backward_weights(const SlidingChannelPlan& plan, int64_t batch, const float* x, const float* dy, float* dw,
                                           int threads, float* workspace) {
  const ConvShape& s = plan.shape;
  const int64_t cin = s.in_channels, cout = s.out_channels, gw = plan.window, kk = taps(s);
  const int64_t blocks = (cout + kBlock - 1) / kBlock;
  constexpr int kPixels = kSlidingChannelWeightPixels;  // each dW row stays in registers across them
  const int64_t x_stride = cin + gw;
  const int64_t per_thread = sliding_channel_conv_backward_workspace(plan, 1);
  const SlidingChannelUkernels& uk = sliding_channel_ukernels();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t block = 0; block < blocks; ++block) {
    float* xe = workspace + static_cast<int64_t>(thread_index()) * per_thread;  // [kPixels][Cin + gw]
    const int64_t o0 = block * kBlock, o1 = std::min(cout, o0 + kBlock);
    int32_t block_starts[kBlock];
    for (int64_t o = o0; o < o1; ++o) block_starts[o - o0] = static_cast<int32_t>(plan.start(o));
    std::fill(dw + o0 * kk * gw, dw + o1 * kk * gw, 0.f);
    const float* g[kPixels];
    for (int64_t kh = 0; kh < s.h.kernel; ++kh)
      for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
        const int64_t tap = kh * s.w.kernel + kw;
        int npix = 0;
        for (int64_t n = 0; n < batch; ++n)
          for (int64_t oh = 0; oh < s.h.out; ++oh) {
            const int64_t ih = oh * s.h.stride - s.h.pad_begin + kh * s.h.dilation;
            if (ih < 0 || ih >= s.h.in) continue;
            for (int64_t ow = 0; ow < s.w.out; ++ow) {
              const int64_t iw = ow * s.w.stride - s.w.pad_begin + kw * s.w.dilation;
              if (iw < 0 || iw >= s.w.in) continue;
              g[npix] = dy + ((n * s.h.out + oh) * s.w.out + ow) * cout;
              const float* src = x + ((n * s.h.in + ih) * s.w.in + iw) * cin;
              float* row = xe + npix * x_stride;
              std::copy(src, src + cin, row);
              std::copy(src, src + gw, row + cin);
              if (++npix == kPixels) {
                uk.weights_chunk(g, xe, x_stride, npix, block_starts, gw, o0, o1, tap, kk, dw);
                npix = 0;
              }
            }
          }
        if (npix) uk.weights_chunk(g, xe, x_stride, npix, block_starts, gw, o0, o1, tap, kk, dw);
      }
  }
}

}  // namespace edgegan::cpu

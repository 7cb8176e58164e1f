#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/gemm/gemm.h"
#include "kernels_cpu/common/tap_gather.h"
#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/common/half_convert.h"
#include "kernels_cpu/common/thread_index.h"

namespace edgegan::cpu {
namespace {

// Output pixels per task, at most: the task's C block (rows x Cout) and A rows (rows x
// Cin) stay in L2 while every tap's weights stream past them once.
constexpr int64_t kMaxBlockRows = 256;
int64_t block_rows(int64_t cin, int64_t cout) {
  return std::clamp<int64_t>((int64_t{1} << 16) / std::max(cin, cout), 16, kMaxBlockRows) / 8 * 8;
}

// Depth of one indirect GEMM: a 256-deep slice of a 32-wide weight panel is 32 KiB (L1).
constexpr int64_t kDepthBlock = 256;

// With this few pixels per tap the weights are used too few times to hide their first
// read, which the micro-kernel makes a 32-wide panel at a time: 128 bytes from each row,
// rows a whole channel count apart (2 KiB at 512). Asked for row by row first, they
// arrive in order (pix2pix's 8x8x512 -> 4x4 layer: 3.3 -> 2.9 ms at 1 thread, 1.9 -> 1.6
// at 2).
constexpr int64_t kStreamedRows = 32;
template <typename BT>
void prefetch_rows(const BT* b, int64_t rows, int64_t n, int64_t ldb) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; j += 64 / static_cast<int64_t>(sizeof(BT))) __builtin_prefetch(b + r * ldb + j, 0, 2);
}

// Output pixels [p0, p0 + m), channels [n0, n0 + n) into `out` (pixel i at out + i * cout),
// each tap's rows found by pixel(img, ih, iw): the block of conv2d_trimmed's GEMM path.
// AT, BT: floats, or (half arithmetic) the input's and the weights' halves; then it
// returns whether a sum is not finite (an fp16 block past the half range), checked
// before the activation could hide it.
template <typename AT = float, typename BT = float, typename PixelFn>
bool trimmed_block(const ConvShape& s, const TapList& taps, const BT* packed, const Epilogue& ep, int64_t p0, int64_t m, int64_t n0,
                   int64_t n, float* out, PixelFn pixel) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  fill_bias(out, m, n, cout, ep.bias ? ep.bias + n0 : nullptr);
  // Per pixel of the block, once: its image and the input position of tap offset (0, 0).
  std::array<int64_t, kMaxBlockRows> img, ih0, iw0;
  for (int64_t i = 0; i < m; ++i) {
    const int64_t p = p0 + i;
    img[static_cast<size_t>(i)] = p / (s.h.out * s.w.out);
    ih0[static_cast<size_t>(i)] = (p / s.w.out) % s.h.out * s.h.stride;
    iw0[static_cast<size_t>(i)] = p % s.w.out * s.w.stride;
  }
  std::array<const AT*, kMaxBlockRows> a_rows;
  std::array<float*, kMaxBlockRows> c_rows;
  for (size_t t = 0; t < taps.size(); ++t) {
    int64_t valid = 0;
    for (size_t i = 0; i < static_cast<size_t>(m); ++i) {
      const int64_t ih = ih0[i] + taps[t].h, iw = iw0[i] + taps[t].w;
      if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
      a_rows[static_cast<size_t>(valid)] = pixel(img[i], ih, iw);
      c_rows[static_cast<size_t>(valid++)] = out + static_cast<int64_t>(i) * cout;
    }
    const BT* w = packed + static_cast<int64_t>(t) * cin * cout + n0;
    for (int64_t k0 = 0; k0 < cin; k0 += kDepthBlock) {
      if (k0 > 0)
        for (int64_t i = 0; i < valid; ++i) a_rows[static_cast<size_t>(i)] += kDepthBlock;
      const int64_t depth = std::min(kDepthBlock, cin - k0);
      if (valid > 0 && valid <= kStreamedRows) prefetch_rows(w + k0 * cout, depth, n, cout);
      if constexpr (std::is_same_v<AT, uint16_t>) gemm_accumulate_rows_f16(valid, n, depth, a_rows.data(), w + k0 * cout, cout, c_rows.data());
      else gemm_accumulate_rows(valid, n, depth, a_rows.data(), w + k0 * cout, cout, c_rows.data());
    }
  }
  bool overflow = false;
  if constexpr (std::is_same_v<AT, uint16_t>)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) overflow = overflow || !std::isfinite(out[i * cout + j]);
  finish_epilogue(out, p0, m, cout, n0, n, ep);  // activation, then the residual (if any)
  return overflow;
}

// The pixel blocks of the path below (any thread count gives each output row's sums in
// the same order).
int64_t pixel_block_rows(const ConvShape& s, int threads) {
  const int64_t pixels = s.batch * s.h.out * s.w.out;
  const int64_t per_thread = (pixels + 2 * threads - 1) / (2 * threads);
  return std::max<int64_t>(16, std::min(block_rows(s.in_channels, s.out_channels), (per_thread + 7) / 8 * 8));
}

// The input rows (over the whole batch: image * h.in + row) a block of output pixels
// reads, [first, last]; last < first when it reads none.
void block_input_rows(const ConvShape& s, const TapList& taps, int64_t p0, int64_t m, int64_t& first, int64_t& last) {
  int64_t lo = taps[0].h, hi = taps[0].h;
  for (size_t t = 0; t < taps.size(); ++t) lo = std::min(lo, taps[t].h), hi = std::max(hi, taps[t].h);
  // Rows only grow with the pixel: the first pixel's lowest tap and the last's highest bound all.
  auto row_of = [&](int64_t p, int64_t tap_h) {
    const int64_t img = p / (s.h.out * s.w.out), ih = std::clamp<int64_t>((p / s.w.out) % s.h.out * s.h.stride + tap_h, 0, s.h.in - 1);
    return img * s.h.in + ih;
  };
  first = row_of(p0, lo);
  last = row_of(p0 + m - 1, hi);
}

// conv2d_trimmed_halves' floats per thread with blocks of `rows` pixels: the widest
// block's input rows, then its output.
int64_t halves_thread_floats(const ConvShape& s, const TapList& taps, int64_t rows) {
  const int64_t pixels = s.batch * s.h.out * s.w.out;
  int64_t most = 0;
  for (int64_t p0 = 0; p0 < pixels; p0 += rows) {
    int64_t first, last;
    block_input_rows(s, taps, p0, std::min(rows, pixels - p0), first, last);
    most = std::max(most, last - first + 1);
  }
  return (most * s.w.in * s.in_channels + 15) / 16 * 16 + (rows * s.out_channels + 15) / 16 * 16;
}

}  // namespace

// Per block of output pixels (any rows, any images): for each tap, the pixels whose input
// pixel lies inside the image form one indirect GEMM (A rows read in place, C rows the
// block's outputs, depth Cin). Taps reading padding are left out, never multiplied, and
// the block's M is its whole pixel count, not one image row's.
// Few input channels (an image): per-tap GEMMs would be Cin deep, too shallow to amortise
// loading and storing C, so blocks gather all taps per pixel (zeros where a tap reads
// padding: border pixels only) for one GEMM of depth taps*Cin (gemm_over_gathered_taps).
int64_t conv2d_trimmed_workspace(const ConvShape& s, int threads) {
  if (s.in_channels >= 16) return 0;
  const int64_t taps = s.h.kernel * s.w.kernel;
  const TapGrid grid{s.batch, s.h.out, s.w.out, s.h.stride, s.w.stride, s.h.in, s.w.in, s.in_channels};
  return gemm_over_gathered_taps_workspace(grid, taps, threads, block_rows(taps * s.in_channels, s.out_channels));
}

void conv2d_trimmed(const ConvShape& s, const float* packed, const float* x, float* y, const Epilogue& ep, int threads, float* workspace,
                    const ConvInputMap* map) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  const TapList taps = conv_tap_offsets(s);
  if (cin < 16) {
    const TapGrid grid{s.batch, s.h.out, s.w.out, s.h.stride, s.w.stride, s.h.in, s.w.in, cin, map};
    const int64_t ntaps = static_cast<int64_t>(taps.size()), k = ntaps * cin;
    return gemm_over_gathered_taps(grid, x, taps.data(), ntaps, packed, cout, y, threads, ep, block_rows(k, cout), workspace);
  }
  // One task: output pixels [p0, p0 + m) and channels [n0, n0 + n) (n0 a multiple of
  // 32, so every column tile is the one a whole-width call would compute: the same bits).
  const int64_t pixels = s.batch * s.h.out * s.w.out;
  auto block = [&](int64_t p0, int64_t m, int64_t n0, int64_t n) {
    trimmed_block(s, taps, packed, ep, p0, m, n0, n, y + p0 * cout + n0,
                  [&](int64_t img, int64_t ih, int64_t iw) { return conv_input_pixel(x, map, s.h.in, s.w.in, cin, img, ih, iw); });
  };
  // Few pixels and wide weights (a U-Net's innermost layers: 64 pixels, 16 MiB of
  // weights): every pixel in one block, so the weights stream past once, and the threads
  // split the output channels. Two pixel blocks per thread, as below, read them twice
  // per thread and left 2 threads no faster than 1 (pix2pix's 16x16x512 -> 8x8 layer,
  // 1 thread / 2 threads: 9.0 / 6.4 -> 6.3 / 3.4 ms).
  if (pixels <= kMaxBlockRows && cout >= 64) {
    const int64_t panels = (cout + 31) / 32, chunks = std::min<int64_t>(panels, 2 * std::max(1, threads));
    const int64_t chunk = (panels + chunks - 1) / chunks * 32, tasks = (cout + chunk - 1) / chunk;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
    for (int64_t task = 0; task < tasks; ++task) block(0, pixels, task * chunk, std::min(chunk, cout - task * chunk));
    return;
  }
  // At least two blocks per thread where the map allows, so a small map (a 4x4x512 input
  // gradient: 256 pixels) keeps every thread busy. Block size never changes a result: each
  // output row's sums run in the same order whatever rows share its block.
  const int64_t rows = pixel_block_rows(s, threads), blocks = (pixels + rows - 1) / rows;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t blk = 0; blk < blocks; ++blk) block(blk * rows, std::min(pixels, blk * rows + rows) - blk * rows, 0, cout);
}

bool conv2d_trimmed_halves_applies(const ConvShape& s, bool mapped) {
  const int64_t pixels = s.batch * s.h.out * s.w.out;
  if (s.in_channels < 16) return true;  // gathered taps (an input map read there too)
  return !(pixels <= kMaxBlockRows && s.out_channels >= 64) && !mapped;
}

int64_t conv2d_trimmed_halves_workspace(const ConvShape& s, int threads) {
  if (s.in_channels < 16) {
    const int64_t taps = s.h.kernel * s.w.kernel;
    const TapGrid grid{s.batch, s.h.out, s.w.out, s.h.stride, s.w.stride, s.h.in, s.w.in, s.in_channels};
    return gemm_over_gathered_taps_workspace(grid, taps, threads, block_rows(taps * s.in_channels, s.out_channels), s.out_channels);
  }
  return std::max(1, threads) * halves_thread_floats(s, conv_tap_offsets(s), pixel_block_rows(s, std::max(1, threads)));
}

std::vector<uint16_t> conv2d_trimmed_half_weights(const ConvShape& s, const float* packed) {
  if (s.in_channels < 16 || !gemm_f16_available()) return {};
  const int64_t n = s.h.kernel * s.w.kernel * s.in_channels * s.out_channels;
  for (int64_t i = 0; i < n; ++i)
    if (!(std::fabs(packed[i]) < 65504.f)) return {};
  std::vector<uint16_t> halves(static_cast<size_t>(n));
  narrow_to_halves(packed, halves.data(), n);
  return halves;
}

bool conv2d_trimmed_halves(const ConvShape& s, const float* packed, const uint16_t* x, uint16_t* y, const Epilogue& ep, int threads,
                           float* workspace, const ConvInputMap* map, const uint16_t* half_weights) {
  const int64_t cin = s.in_channels, cout = s.out_channels, row_values = s.w.in * cin;
  const TapList taps = conv_tap_offsets(s);
  if (cin < 16) {
    const TapGrid grid{s.batch, s.h.out, s.w.out, s.h.stride, s.w.stride, s.h.in, s.w.in, cin, map};
    const int64_t ntaps = static_cast<int64_t>(taps.size()), k = ntaps * cin;
    return gemm_over_gathered_taps_halves(grid, x, taps.data(), ntaps, packed, cout, y, threads, ep, block_rows(k, cout), workspace);
  }
  const int64_t pixels = s.batch * s.h.out * s.w.out, rows = pixel_block_rows(s, threads), blocks = (pixels + rows - 1) / rows;
  const int64_t per_thread = halves_thread_floats(s, taps, rows);
  bool overflow = false;
  if (half_weights && gemm_f16_available()) {
    // Half arithmetic: the GEMMs read the input's halves in place (no widening) into a
    // float block per thread.
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1) reduction(|| : overflow)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t p0 = blk * rows, m = std::min(pixels, p0 + rows) - p0;
      float* out = workspace + thread_index() * per_thread + (per_thread - (rows * cout + 15) / 16 * 16);
      overflow = trimmed_block<uint16_t>(s, taps, half_weights, ep, p0, m, 0, cout, out,
                                         [&](int64_t img, int64_t ih, int64_t iw) { return x + ((img * s.h.in + ih) * s.w.in + iw) * cin; }) ||
                 overflow;
      overflow = narrow_to_halves(out, y + p0 * cout, m * cout) || overflow;
    }
    return overflow;
  }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1) reduction(|| : overflow)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t p0 = blk * rows, m = std::min(pixels, p0 + rows) - p0;
    float* region = workspace + thread_index() * per_thread;
    float* out = region + (per_thread - (rows * cout + 15) / 16 * 16);
    int64_t first, last;
    block_input_rows(s, taps, p0, m, first, last);
    // The block's input rows widened once (x's rows are contiguous over the batch).
    if (last >= first) widen_halves(x + first * row_values, region, (last - first + 1) * row_values);
    trimmed_block(s, taps, packed, ep, p0, m, 0, cout, out,
                  [&](int64_t img, int64_t ih, int64_t iw) -> const float* { return region + (img * s.h.in + ih - first) * row_values + iw * cin; });
    overflow = narrow_to_halves(out, y + p0 * cout, m * cout) || overflow;
  }
  return overflow;
}

}  // namespace edgegan::cpu

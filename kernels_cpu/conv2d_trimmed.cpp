#include <algorithm>
#include <vector>

#include "kernels_cpu/conv2d.h"
#include "kernels_cpu/gemm.h"
#include "kernels_cpu/tap_gather.h"

namespace edgegan::cpu {
namespace {

// Output pixels per task: the task's C block (rows x Cout) and A rows (rows x Cin) stay
// in L2 while every tap's weights stream past them once. Independent of the thread
// count, so results are too.
int64_t block_rows(int64_t cin, int64_t cout) {
  return std::clamp<int64_t>((int64_t{1} << 16) / std::max(cin, cout), 16, 256) / 8 * 8;
}

// Depth of one indirect GEMM: a 256-deep slice of a 32-wide weight panel is 32 KiB (L1).
constexpr int64_t kDepthBlock = 256;

// Few input channels (an image): per-tap GEMMs would be Cin deep, too shallow to amortise
// loading and storing C. The block's pixels gather all taps into one row (zeros where a
// tap reads padding: border pixels only) for one GEMM of depth taps*Cin.
void conv2d_gathered(const ConvShape& s, const float* packed, const float* x, float* y, const Epilogue& ep, int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels, taps_n = s.h.kernel * s.w.kernel, k = taps_n * cin;
  std::vector<TapOffset> taps;
  for (int64_t kh = 0; kh < s.h.kernel; ++kh)
    for (int64_t kw = 0; kw < s.w.kernel; ++kw) taps.push_back({kh * s.h.dilation - s.h.pad_begin, kw * s.w.dilation - s.w.pad_begin});
  const TapGrid grid{s.batch, s.h.out, s.w.out, s.h.stride, s.w.stride, s.h.in, s.w.in, cin};
  const int64_t rows = std::min(panel_rows(k), block_rows(k, cout)), pixels = grid.pixels(), blocks = (pixels + rows - 1) / rows;
  std::vector<float> scratch(static_cast<size_t>(std::max(1, threads) * rows * k));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t p0 = blk * rows, m = std::min(pixels, p0 + rows) - p0;
    float* col = scratch.data() + thread_index() * rows * k;
    float* out = y + p0 * cout;
    gather_taps(grid, x, taps.data(), taps_n, p0, p0 + m, col);
    fill_bias(out, m, cout, cout, ep.bias);
    gemm_accumulate(m, cout, k, col, k, packed, cout, out, cout);
    apply_activation(out, m, cout, cout, ep.activation, ep.alpha);
  }
}

}  // namespace

// Per block of output pixels (any rows, any images): for each tap, the pixels whose input
// pixel lies inside the image form one indirect GEMM (A rows read in place, C rows the
// block's outputs, depth Cin). Taps reading padding are left out, never multiplied, and
// the block's M is its whole pixel count, not one image row's.
void conv2d_trimmed(const ConvShape& s, const float* packed, const float* x, float* y,
                    const Epilogue& ep, int threads) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  if (cin < 16) return conv2d_gathered(s, packed, x, y, ep, threads);
  // At least two blocks per thread where the map allows, so a small map (a 4x4x512 input
  // gradient: 256 pixels) keeps every thread busy. Block size never changes a result: each
  // output row's sums run in the same order whatever rows share its block.
  const int64_t pixels = s.batch * s.h.out * s.w.out;
  const int64_t per_thread = (pixels + 2 * threads - 1) / (2 * threads);
  const int64_t rows = std::max<int64_t>(16, std::min(block_rows(cin, cout), (per_thread + 7) / 8 * 8)), blocks = (pixels + rows - 1) / rows;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t p0 = blk * rows, m = std::min(pixels, p0 + rows) - p0;
    float* out = y + p0 * cout;
    fill_bias(out, m, cout, cout, ep.bias);
    std::vector<const float*> a_rows(static_cast<size_t>(m));
    std::vector<float*> c_rows(static_cast<size_t>(m));
    for (int64_t kh = 0; kh < s.h.kernel; ++kh)
      for (int64_t kw = 0; kw < s.w.kernel; ++kw) {
        const int64_t th = kh * s.h.dilation - s.h.pad_begin, tw = kw * s.w.dilation - s.w.pad_begin;
        int64_t valid = 0;
        for (int64_t p = p0; p < p0 + m; ++p) {
          const int64_t n = p / (s.h.out * s.w.out), oh = (p / s.w.out) % s.h.out, ow = p % s.w.out;
          const int64_t ih = oh * s.h.stride + th, iw = ow * s.w.stride + tw;
          if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
          a_rows[static_cast<size_t>(valid)] = x + ((n * s.h.in + ih) * s.w.in + iw) * cin;
          c_rows[static_cast<size_t>(valid++)] = out + (p - p0) * cout;
        }
        const float* w = packed + (kh * s.w.kernel + kw) * cin * cout;
        for (int64_t k0 = 0; k0 < cin; k0 += kDepthBlock) {
          if (k0 > 0)
            for (int64_t i = 0; i < valid; ++i) a_rows[static_cast<size_t>(i)] += kDepthBlock;
          gemm_accumulate_rows(valid, cout, std::min(kDepthBlock, cin - k0), a_rows.data(), w + k0 * cout, cout, c_rows.data());
        }
      }
    apply_activation(out, m, cout, cout, ep.activation, ep.alpha);
  }
}

}  // namespace edgegan::cpu

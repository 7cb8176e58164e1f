#include <algorithm>
#include <array>

#include "kernels_cpu/conv_transpose.h"
#include "kernels_cpu/gemm_microkernel.h"

namespace edgegan::cpu {
namespace {

// A task is one (phase, tile of that phase's output pixels over the whole batch,
// block of output channels). Tiles span rows and images, so a 4x4 input with
// 1024 channels still yields enough tasks for every thread; every output pixel
// belongs to exactly one phase and tile, so tasks write disjoint memory (no
// atomics, no reduction, results independent of the thread count).
constexpr int64_t kTilePixels = 32;

struct PhaseGrid {
  int64_t rows = 0, cols = 0;  // q extent of the phase along h and w
  int64_t pixels(int64_t batch) const { return batch * rows * cols; }
};

PhaseGrid grid_of(const AxisPhase& ph, const AxisPhase& pw) {
  return {std::max<int64_t>(0, ph.q_end - ph.q_begin), std::max<int64_t>(0, pw.q_end - pw.q_begin)};
}

}  // namespace

void conv_transpose2d_split(const DeconvShape& s, const SplitDeconvWeights& wts, const float* x, float* y,
                            const Epilogue& ep, int threads) {
  const GemmMicrokernel& uk = gemm_microkernel();
  const int64_t cin = s.in_channels, cout = s.out_channels;
  const int64_t sh = s.h.stride, sw = s.w.stride;
  int64_t max_pixels = 0;
  for (const AxisPhase& ph : wts.phases_h)
    for (const AxisPhase& pw : wts.phases_w) max_pixels = std::max(max_pixels, grid_of(ph, pw).pixels(s.batch));
  const int64_t tiles = (max_pixels + kTilePixels - 1) / kTilePixels;
  const int64_t col_block = 2 * uk.nr, col_blocks = (cout + col_block - 1) / col_block;
  const int64_t tasks = sh * sw * tiles * col_blocks;

#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t cb = task % col_blocks, tile = task / col_blocks % tiles, phase = task / col_blocks / tiles;
    const int64_t ph_i = phase / sw, pw_i = phase % sw;
    const AxisPhase& ph = wts.phases_h[static_cast<size_t>(ph_i)];
    const AxisPhase& pw = wts.phases_w[static_cast<size_t>(pw_i)];
    const PhaseGrid g = grid_of(ph, pw);
    const int64_t p0 = tile * kTilePixels, p1 = std::min(g.pixels(s.batch), p0 + kTilePixels);
    if (p0 >= p1) continue;
    const int64_t j0 = cb * col_block, width = std::min(col_block, cout - j0);

    // The tile's pixels: phase coordinates and output row pointers (at column j0).
    std::array<int64_t, kTilePixels> img, qh, qw;
    std::array<float*, kTilePixels> out;
    for (int64_t p = p0; p < p1; ++p) {
      const size_t i = static_cast<size_t>(p - p0);
      const int64_t per_image = g.rows * g.cols, r = p % per_image;
      img[i] = p / per_image;
      qh[i] = ph.q_begin + r / g.cols;
      qw[i] = pw.q_begin + r % g.cols;
      out[i] = y + ((img[i] * s.h.out + ph.output_of(qh[i], s.h)) * s.w.out + pw.output_of(qw[i], s.w)) * cout + j0;
      fill_bias(out[i], 1, width, width, ep.bias ? ep.bias + j0 : nullptr);
    }

    const float* sub = wts.sub_kernels[static_cast<size_t>(phase)];
    const int64_t taps_w = static_cast<int64_t>(pw.taps.size());
    std::array<const float*, kTilePixels> a_rows;
    std::array<float*, kTilePixels> c_rows;
    for (size_t th = 0; th < ph.taps.size(); ++th) {
      for (int64_t tw = 0; tw < taps_w; ++tw) {
        // Only the pixels whose input for this tap lies inside the image: the
        // trimmed taps are skipped, never multiplied as zeros.
        const int64_t off_h = ph.offsets[th], off_w = pw.offsets[static_cast<size_t>(tw)];
        int64_t m = 0;
        for (int64_t i = 0; i < p1 - p0; ++i) {
          const int64_t ih = qh[static_cast<size_t>(i)] - off_h, iw = qw[static_cast<size_t>(i)] - off_w;
          if (ih < 0 || ih >= s.h.in || iw < 0 || iw >= s.w.in) continue;
          a_rows[static_cast<size_t>(m)] = x + ((img[static_cast<size_t>(i)] * s.h.in + ih) * s.w.in + iw) * cin;
          c_rows[static_cast<size_t>(m++)] = out[static_cast<size_t>(i)];
        }
        const float* b = sub + (static_cast<int64_t>(th) * taps_w + tw) * cin * cout + j0;
        for (int64_t n0 = 0; n0 < width; n0 += uk.nr) {
          const int nr = static_cast<int>(std::min<int64_t>(uk.nr, width - n0));
          for (int64_t i0 = 0; i0 < m; i0 += uk.mr) {
            const int mr = static_cast<int>(std::min<int64_t>(uk.mr, m - i0));
            std::array<float*, kTilePixels> c_cols;
            for (int i = 0; i < mr; ++i) c_cols[static_cast<size_t>(i)] = c_rows[static_cast<size_t>(i0 + i)] + n0;
            uk.run(cin, mr, nr, a_rows.data() + i0, b + n0, cout, c_cols.data());
          }
        }
      }
    }
    for (int64_t i = 0; i < p1 - p0; ++i) apply_activation(out[static_cast<size_t>(i)], 1, width, width, ep.activation, ep.alpha);
  }
}

}  // namespace edgegan::cpu

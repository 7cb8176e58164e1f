#include "kernels_cpu/conv2d/conv2d_winograd_s2.h"

#include <algorithm>
#include <array>

#include "kernels_cpu/common/task_runs.h"
#include "kernels_cpu/common/thread_index.h"
#include "kernels_cpu/common/winograd_f2x2.h"

namespace edgegan::cpu {
namespace {

constexpr int64_t kElements = kF2x2Elements;
constexpr int64_t kPhases = 4;         // (a_h, a_w) of the input's polyphase components
constexpr int64_t kColBlock = kF2x2SliceBlock;  // output channels per task
constexpr int64_t kPanel = kF2x2SlicePanel;      // the slice's column panels, as the micro-kernels read them
constexpr int64_t kPanels = kColBlock / kPanel;
constexpr int64_t kChunk = 256;        // windows per task: each slice panel stays in L2 across them

int64_t round_up16(int64_t n) { return (n + 15) / 16 * 16; }
int64_t blocks(int64_t length) { return (length + 1) / 2; }  // 2-output blocks along an axis

struct Windows {
  int64_t per_row = 0, per_image = 0, count = 0;
};
Windows windows_of(const ConvShape& s) {
  Windows w;
  w.per_row = blocks(s.w.out);
  w.per_image = blocks(s.h.out) * w.per_row;
  w.count = saturating_product({s.batch, w.per_image});
  return w;
}

int64_t depth(const ConvShape& s) { return kPhases * s.in_channels; }  // K of the GEMMs

// One thread's scratch: the filter slice [e][panel][4 Cin][kPanel], a chunk's products
// [e][kChunk][kColBlock], and a row of zeros (the input outside the image; the
// products' starting sums).
int64_t thread_floats(const ConvShape& s) {
  return kElements * kPanels * depth(s) * kPanel + kElements * kChunk * kColBlock + round_up16(std::max(s.in_channels, kColBlock));
}

// Window w's input transform for every phase into v[e][4 Cin] (e_stride apart): phase
// (a_h, a_w) reads the samples at 4 J + 2 t + a - pad, t = 0..2, on each axis.
void transform_window(const ConvShape& s, const Windows& wn, int64_t w, const float* x, const ConvInputMap* map, const float* zeros, float* v,
                      int64_t e_stride) {
  const int64_t cin = s.in_channels, img = w / wn.per_image, jh = w % wn.per_image / wn.per_row, jw = w % wn.per_row;
  for (int64_t phase = 0; phase < kPhases; ++phase) {
    const int64_t ah = phase / 2, aw = phase % 2;
    std::array<const float*, 9> d;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        const int64_t ih = 4 * jh + 2 * r + ah - s.h.pad_begin, iw = 4 * jw + 2 * c + aw - s.w.pad_begin;
        const bool inside = ih >= 0 && ih < s.h.in && iw >= 0 && iw < s.w.in;
        d[static_cast<size_t>(3 * r + c)] = inside ? conv_input_pixel(x, map, s.h.in, s.w.in, cin, img, ih, iw) : zeros;
      }
    f2x2_input_transform(d.data(), cin, v + phase * cin, e_stride);
  }
}

// The filters' slice for columns [j0, j0 + width): element e of phase (a_h, a_w) is
// G g Gᵀ of g[i][j] = w[2i + a_h][2j + a_w], for every input channel, into
// slice[e][panel][phase * Cin + c][kPanel].
void make_slice(const ConvShape& s, const float* w, int64_t j0, int64_t width, float* slice) {
  const int64_t cin = s.in_channels, cout = s.out_channels, k = depth(s);
  auto tap = [&](int64_t kh, int64_t kw, int64_t col) { return w + (kh * 4 + kw) * cin * cout + col; };
  for (int64_t phase = 0; phase < kPhases; ++phase) {
    const int64_t ah = phase / 2, aw = phase % 2;
    for (int64_t p = 0; p * kPanel < width; ++p) {
      const int64_t col = j0 + p * kPanel, n = std::min(kPanel, width - p * kPanel);
      // Input channel c's row of each tap is Cout floats after c - 1's.
      const std::array<const float*, 4> g = {tap(ah, aw, col), tap(ah, 2 + aw, col), tap(2 + ah, aw, col), tap(2 + ah, 2 + aw, col)};
      std::array<float*, kElements> u;
      for (int64_t e = 0; e < kElements; ++e) u[static_cast<size_t>(e)] = slice + ((e * kPanels + p) * k + phase * cin) * kPanel;
      f2x2_filter_transform(g.data(), cout, u.data(), kPanel, cin, n);
    }
  }
}

}  // namespace

bool conv2d_winograd_s2_applies(const ConvShape& s, int64_t groups) {
  return groups == 1 && s.h.kernel == 4 && s.w.kernel == 4 && s.h.stride == 2 && s.w.stride == 2 && s.h.dilation == 1 && s.w.dilation == 1 &&
         s.in_channels >= 1 && s.out_channels >= 1;
}

// Where it measured faster than conv2d_trimmed (pix2pix's encoder, 1 thread / 2
// threads): 128x128x64->128 (1024 windows) 10.5 -> 7.4 / 5.5 -> 3.9 ms, 64x64x128->256
// (256) 10.0 -> 6.8 / 5.2 -> 3.6 ms, 32x32x256->512 (64) 10.2 -> 7.6 / 5.3 -> 4.2 ms.
// With fewer windows it lost: 16x16x512->512 (16) 6.3 -> 6.6 / 3.2 -> 4.1 ms, 8x8x512
// (4) 2.9 -> 4.4 ms: each task's slice transform is then a large part of its work.
constexpr int64_t kMinWindows = 64;
constexpr int64_t kMaxInputBytes = int64_t{16} << 20;  // every window's input transform, kept for the run

bool conv2d_winograd_s2_pays(const ConvShape& s, int64_t groups) {
  if (!conv2d_winograd_s2_applies(s, groups) || s.in_channels < 16 || s.out_channels < 16) return false;
  const Windows wn = windows_of(s);
  return wn.count >= kMinWindows && saturating_product({kElements, wn.count, depth(s), 4}) <= kMaxInputBytes;
}

int64_t conv2d_winograd_s2_workspace(const ConvShape& s, int threads) {
  return saturating_sum({round_up16(saturating_product({kElements, windows_of(s).count, depth(s)})), saturating_product({std::max(1, threads), thread_floats(s)})});
}

void conv2d_winograd_s2(const ConvShape& s, const float* weights, const float* x, float* y, const Epilogue& ep, int threads, float* workspace,
                        const ConvInputMap* map) {
  const int64_t cin = s.in_channels, cout = s.out_channels, k = depth(s);
  const Windows wn = windows_of(s);
  const int64_t e_stride = wn.count * k;
  const int64_t col_blocks = (cout + kColBlock - 1) / kColBlock, chunks = (wn.count + kChunk - 1) / kChunk;
  float* v = workspace;
  float* scratch = workspace + round_up16(kElements * e_stride);
  const int64_t per_thread = thread_floats(s);
  TaskRuns runs(col_blocks * chunks, std::max(1, threads));
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    float* slice = scratch + thread_index() * per_thread;
    float* m = slice + kElements * kPanels * k * kPanel;
    float* zeros = m + kElements * kChunk * kColBlock;
    std::fill(zeros, zeros + std::max(cin, kColBlock), 0.f);
#pragma omp for schedule(static)
    for (int64_t w = 0; w < wn.count; ++w) transform_window(s, wn, w, x, map, zeros, v + w * k, e_stride);
    int64_t slice_j0 = -1;  // the column block the thread's slice holds
    for (int64_t task; (task = runs.next(thread_index())) >= 0;) {
      const int64_t j0 = task / chunks * kColBlock, width = std::min(kColBlock, cout - j0);
      const int64_t c0 = task % chunks * kChunk, chunk = std::min(kChunk, wn.count - c0);
      // A thread's tasks are mostly consecutive: chunks of one column block, one slice.
      if (j0 != slice_j0) make_slice(s, weights, j0, width, slice), slice_j0 = j0;
      f2x2_slice_products(v, e_stride, k, c0, chunk, slice, width, zeros, m);
      // Output transform, straight to each window's 2x2 output pixels.
      for (int64_t i = 0; i < chunk; ++i) {
        const int64_t w = c0 + i, img = w / wn.per_image, jh = w % wn.per_image / wn.per_row, jw = w % wn.per_row;
        std::array<const float*, kElements> mr;
        for (int64_t e = 0; e < kElements; ++e) mr[static_cast<size_t>(e)] = m + (e * chunk + i) * width;
        std::array<float*, 4> o;
        std::array<const float*, 4> r;
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b) {
            const int64_t oh = 2 * jh + a, ow = 2 * jw + b;
            const bool inside = oh < s.h.out && ow < s.w.out;
            const int64_t offset = ((img * s.h.out + oh) * s.w.out + ow) * cout + j0;
            o[static_cast<size_t>(2 * a + b)] = inside ? y + offset : nullptr;
            r[static_cast<size_t>(2 * a + b)] = inside && ep.residual ? ep.residual + offset : nullptr;
          }
        f2x2_output_transform(mr.data(), width, o.data(), r.data(), ep, j0);
      }
    }
  }
}

}  // namespace edgegan::cpu

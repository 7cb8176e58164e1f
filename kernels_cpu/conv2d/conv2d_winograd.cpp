#include "kernels_cpu/conv2d/conv2d_winograd.h"

#include <algorithm>
#include <array>
#include <type_traits>

#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/common/half_convert.h"
#include "kernels_cpu/common/simd_clones.h"
#include "kernels_cpu/common/task_runs.h"
#include "kernels_cpu/common/thread_index.h"
#include "kernels_cpu/common/winograd_epilogue.h"
#include "kernels_cpu/gemm/gemm.h"

namespace edgegan::cpu {
namespace {

constexpr int kTile = 4, kWindow = 6;    // F(4x4, 3x3): 4x4 outputs from a 6x6 window
constexpr int64_t kElements = 36;        // the transformed window
constexpr int64_t kWindows = 16;         // windows per task: two rows of the 8-row micro-kernel
constexpr int64_t kColBlock = 64;        // output channels per product
constexpr int64_t kLanes = 16;           // channels the transforms hold in registers at once

int64_t round_up16(int64_t n) { return (n + 15) / 16 * 16; }
int64_t tiles(int64_t length) { return (length + kTile - 1) / kTile; }

// One thread's scratch: the task's transformed windows [36][kWindows][Cin], one column
// block's products [36][kWindows][kColBlock], and a row of zeros (the input outside the
// image; the products' starting sums), max(Cin, kColBlock) long.
int64_t thread_floats(const ConvShape& s) {
  return round_up16(kElements * kWindows * s.in_channels) + kElements * kWindows * kColBlock + round_up16(std::max(s.in_channels, kColBlock));
}

// v[e][c] (e = 6i + j, e_stride floats apart) = (Bᵀ d B)[i][j] per channel, for the window
// whose pixel (r, col) starts at d[6r + col]: channels c0 .. c0 + n. Bᵀ's rows, applied to z0..z5:
//   4z0 - 5z2 + z4,  -4z1 - 4z2 + z3 + z4,  4z1 - 4z2 - z3 + z4,
//   -2z1 - z2 + 2z3 + z4,  2z1 - z2 - 2z3 + z4,  4z1 - 5z3 + z5.
// Always inlined into its (per-ISA) caller, with n a constant for whole lane blocks.
#define EDGEGAN_ALWAYS_INLINE inline __attribute__((always_inline))
EDGEGAN_ALWAYS_INLINE void input_transform_lanes(const float* const* d, int64_t c0, int64_t n, float* v, int64_t e_stride) {
  float t[kWindow][kWindow][kLanes];  // Bᵀ d: [row][column]
  for (int j = 0; j < kWindow; ++j) {
    const float *z0 = d[j] + c0, *z1 = d[6 + j] + c0, *z2 = d[12 + j] + c0, *z3 = d[18 + j] + c0, *z4 = d[24 + j] + c0, *z5 = d[30 + j] + c0;
    for (int64_t l = 0; l < n; ++l) {
      t[0][j][l] = 4.f * z0[l] - 5.f * z2[l] + z4[l];
      t[1][j][l] = -4.f * (z1[l] + z2[l]) + z3[l] + z4[l];
      t[2][j][l] = 4.f * (z1[l] - z2[l]) - z3[l] + z4[l];
      t[3][j][l] = 2.f * (z3[l] - z1[l]) - z2[l] + z4[l];
      t[4][j][l] = 2.f * (z1[l] - z3[l]) - z2[l] + z4[l];
      t[5][j][l] = 4.f * z1[l] - 5.f * z3[l] + z5[l];
    }
  }
  for (int i = 0; i < kWindow; ++i) {
    const float *z0 = t[i][0], *z1 = t[i][1], *z2 = t[i][2], *z3 = t[i][3], *z4 = t[i][4], *z5 = t[i][5];
    // Six rows that never overlap: said so, or the loop stays scalar (it did: half the layer's time).
    float* o = v + 6 * i * e_stride + c0;
    float *__restrict o0 = o, *__restrict o1 = o + e_stride, *__restrict o2 = o + 2 * e_stride;
    float *__restrict o3 = o + 3 * e_stride, *__restrict o4 = o + 4 * e_stride, *__restrict o5 = o + 5 * e_stride;
EDGEGAN_NO_ALIAS_LOOP
    for (int64_t l = 0; l < n; ++l) {
      o0[l] = 4.f * z0[l] - 5.f * z2[l] + z4[l];
      o1[l] = -4.f * (z1[l] + z2[l]) + z3[l] + z4[l];
      o2[l] = 4.f * (z1[l] - z2[l]) - z3[l] + z4[l];
      o3[l] = 2.f * (z3[l] - z1[l]) - z2[l] + z4[l];
      o4[l] = 2.f * (z1[l] - z3[l]) - z2[l] + z4[l];
      o5[l] = 4.f * z1[l] - 5.f * z3[l] + z5[l];
    }
  }
}

EDGEGAN_SIMD_CLONES void input_transform(const float* const* d, int64_t cin, float* v, int64_t e_stride) {
  int64_t c0 = 0;
  for (; c0 + kLanes <= cin; c0 += kLanes) input_transform_lanes(d, c0, kLanes, v, e_stride);
  if (c0 < cin) input_transform_lanes(d, c0, cin - c0, v, e_stride);
}

// One window's 4x4 outputs (out[4a + b], nullptr outside the image) from its products
// (m[e] the row of element e, `width` channels): (Aᵀ M A)[a][b] + bias, through f, then
// the residual's pixel (res[4a + b]; the array or an entry may be null: none) added. Aᵀ's rows, applied to z0..z5:
//   z0 + z1 + z2 + z3 + z4,  z1 - z2 + 2(z3 - z4),  z1 + z2 + 4(z3 + z4),  z1 - z2 + 8(z3 - z4) + z5.
template <typename F>
EDGEGAN_ALWAYS_INLINE void output_transform_lanes(const float* const* m, int64_t c0, int64_t n, float* const* out, const float* const* res,
                                                  const float* bias, F f) {
  {
    float t[kTile][kWindow][kLanes];  // Aᵀ M: [output row][column]
    for (int j = 0; j < kWindow; ++j) {
      const float *z0 = m[j] + c0, *z1 = m[6 + j] + c0, *z2 = m[12 + j] + c0, *z3 = m[18 + j] + c0, *z4 = m[24 + j] + c0, *z5 = m[30 + j] + c0;
      for (int64_t l = 0; l < n; ++l) {
        const float p = z1[l] + z2[l], q = z1[l] - z2[l], r = z3[l] + z4[l], s = z3[l] - z4[l];
        t[0][j][l] = z0[l] + p + r;
        t[1][j][l] = q + 2.f * s;
        t[2][j][l] = p + 4.f * r;
        t[3][j][l] = q + 8.f * s + z5[l];
      }
    }
    for (int a = 0; a < kTile; ++a) {
      float r[kTile][kLanes];
      const float *z0 = t[a][0], *z1 = t[a][1], *z2 = t[a][2], *z3 = t[a][3], *z4 = t[a][4], *z5 = t[a][5];
      for (int64_t l = 0; l < n; ++l) {
        const float p = z1[l] + z2[l], q = z1[l] - z2[l], u = z3[l] + z4[l], s = z3[l] - z4[l];
        const float b = bias ? bias[c0 + l] : 0.f;
        r[0][l] = f(z0[l] + p + u + b);
        r[1][l] = f(q + 2.f * s + b);
        r[2][l] = f(p + 4.f * u + b);
        r[3][l] = f(q + 8.f * s + z5[l] + b);
      }
      for (int b = 0; b < kTile; ++b)
        if (out[kTile * a + b]) store_window_pixel(out[kTile * a + b], res ? res[kTile * a + b] : nullptr, r[b], c0, n);
    }
  }
}

template <typename F>
EDGEGAN_ALWAYS_INLINE void output_transform_with(const float* const* m, int64_t width, float* const* out, const float* const* res,
                                                 const float* bias, F f) {
  int64_t c0 = 0;
  for (; c0 + kLanes <= width; c0 += kLanes) output_transform_lanes(m, c0, kLanes, out, res, bias, f);
  if (c0 < width) output_transform_lanes(m, c0, width - c0, out, res, bias, f);
}

// The window's outputs with the epilogue (its bias from output channel `column`).
EDGEGAN_SIMD_CLONES void output_transform(const float* const* m, int64_t width, float* const* out, const float* const* res, const Epilogue& ep,
                                          int64_t column) {
  const Epilogue block = ep.from_column(column);
  winograd_epilogue(block, width, kTile * kTile, out, res,
                    [&](auto f, const float* const* r) EDGEGAN_ALWAYS_INLINE_LAMBDA { output_transform_with(m, width, out, r, block.bias, f); });
}

}  // namespace

bool conv2d_winograd_applies(const ConvShape& s, int64_t groups) {
  return groups == 1 && s.h.kernel == 3 && s.w.kernel == 3 && s.h.stride == 1 && s.w.stride == 1 && s.h.dilation == 1 && s.w.dilation == 1 &&
         s.in_channels >= 1 && s.out_channels >= 1 && s.h.out >= 1 && s.w.out >= 1;
}

// Where it pays, measured against conv2d_trimmed (bench/conv2d_winograd_bench.cpp, Zen 4
// with AVX-512, batch 1, medians; time of direct / time of Winograd, 1 thread / 2 threads):
//   128x128x64->64 2.24 / 2.08     64x64x64->64 1.72 / 2.46     64x64x128->128 2.46 / 2.90
//   32x32x128->128 2.63 / 2.79     256x256x32->32 2.06 / 2.11   128x128x16->16 1.90 / 2.20
//   64x64x256->256 2.3 / 2.2 with its filters transformed in every run (9 MiB: 47 -> 20
//       ms in CycleGAN at 1 thread; conv2d_winograd_f6 now takes such layers)
//   16x16x256->256 0.72 / 0.48 (16 windows)     8x8x512->512 1.30 / 0.85 (4 windows)
// It needs channels deep enough for the GEMMs and enough windows to share each
// transformed filter. Filters over 3 MiB are not kept: the copy is 4x the weights
// (CycleGAN's eighteen 256-channel convolutions would hold 170 MiB, its peak RSS 237 MiB
// against ONNX Runtime's 363, a poor trade on an edge device). Those layers are
// conv2d_winograd_f6's, which makes its filters a slice at a time and measured faster
// than this form making them whole in each run; so this form takes only layers whose
// filters fit the kept size (made in each run only past the session's copy budget).
constexpr int64_t kMinChannels = 16;
constexpr int64_t kMinWindows = 64;
constexpr int64_t kMaxKeptBytes = int64_t{3} << 20;

bool conv2d_winograd_keeps_filters(const ConvShape& s) { return conv2d_winograd_weight_floats(s) * 4 <= kMaxKeptBytes; }

bool conv2d_winograd_pays(const ConvShape& s, int64_t groups) {
  if (!conv2d_winograd_applies(s, groups) || s.in_channels < kMinChannels || s.out_channels < kMinChannels) return false;
  return conv2d_winograd_keeps_filters(s) && saturating_product({s.batch, tiles(s.h.out), tiles(s.w.out)}) >= kMinWindows;
}

int64_t conv2d_winograd_weight_floats(const ConvShape& s) { return saturating_product({kElements, s.in_channels, s.out_channels}); }

namespace {
// U = G g Gᵀ for matrix entries [i0, i0 + n) (one (ci, co) pair each), n <= kLanes:
// the entries are contiguous in each tap's and each element's matrix, so the lanes
// loops vectorise (an entry at a time, the 9 loads and 36 stores per entry went
// scalar: 13.7 ms for a 256x256 layer's filters at 1 thread).
EDGEGAN_ALWAYS_INLINE void transform_filter_lanes(const float* w, int64_t matrix, int64_t i0, int64_t n, float* out) {
  constexpr double G[kWindow][3] = {{1.0 / 4, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  double g[9][kLanes];
  for (int t = 0; t < 9; ++t)
    for (int64_t l = 0; l < n; ++l) g[t][l] = w[t * matrix + i0 + l];
  double gg[kWindow][3][kLanes];  // G g
  for (int i = 0; i < kWindow; ++i)
    for (int c = 0; c < 3; ++c)
      for (int64_t l = 0; l < n; ++l) gg[i][c][l] = G[i][0] * g[c][l] + G[i][1] * g[3 + c][l] + G[i][2] * g[6 + c][l];
  for (int i = 0; i < kWindow; ++i)
    for (int j = 0; j < kWindow; ++j) {
      float* __restrict o = out + (i * kWindow + j) * matrix + i0;
      for (int64_t l = 0; l < n; ++l) o[l] = static_cast<float>(gg[i][0][l] * G[j][0] + gg[i][1][l] * G[j][1] + gg[i][2][l] * G[j][2]);
    }
}

EDGEGAN_SIMD_CLONES void transform_filters(const float* w, int64_t matrix, int64_t i0, int64_t i1, float* out) {
  int64_t i = i0;
  for (; i + kLanes <= i1; i += kLanes) transform_filter_lanes(w, matrix, i, kLanes, out);
  if (i < i1) transform_filter_lanes(w, matrix, i, i1 - i, out);
}
}  // namespace

void pack_conv2d_winograd_weights(const ConvShape& s, const float* w, float* out, int threads) {
  const int64_t matrix = s.in_channels * s.out_channels, chunk = 1024, chunks = (matrix + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && chunks > 1)
  for (int64_t k = 0; k < chunks; ++k) transform_filters(w, matrix, k * chunk, std::min(matrix, k * chunk + chunk), out);
}

namespace {
// An fp16 session's extra scratch per thread, after thread_floats: a window's 36 input
// pixels widened, then one window's 16 outputs of a column block before they are narrowed.
constexpr int64_t kOutputStage = kTile * kTile * kColBlock;
int64_t halves_thread_floats(const ConvShape& s) { return round_up16(kElements * s.in_channels) + kOutputStage; }

// The form on floats, or (XT, YT halves) on an fp16 session's: each window's pixels
// widened before its input transform, its outputs transformed into `stage` and narrowed
// (no residual: such layers are left to the adapter). Returns whether one overflowed.
template <typename XT, typename YT>
bool winograd_layer(const ConvShape& s, const float* transformed, const XT* x, YT* y, const Epilogue& ep, int threads, float* workspace,
                    const ConvInputMap* map) {
  constexpr bool halves = !std::is_same_v<YT, float>;
  const int64_t cin = s.in_channels, cout = s.out_channels;
  const int64_t tiles_w = tiles(s.w.out), per_image = tiles(s.h.out) * tiles_w, windows = s.batch * per_image;
  const int64_t tasks = (windows + kWindows - 1) / kWindows, matrix = cin * cout;
  const int64_t per_thread = thread_floats(s) + (halves ? halves_thread_floats(s) : 0);
  TaskRuns runs(tasks, std::max(1, threads));
  bool overflow = false;
#pragma omp parallel num_threads(threads) if (threads > 1) reduction(|| : overflow)
  {
    float* v = workspace + thread_index() * per_thread;
    float* m = v + round_up16(kElements * kWindows * cin);
    float* zeros = m + kElements * kWindows * kColBlock;
    float* wide = v + thread_floats(s);  // halves only
    float* stage = wide + round_up16(kElements * cin);
    std::fill(zeros, zeros + std::max(cin, kColBlock), 0.f);
    const int64_t e_stride = kWindows * cin;
    std::array<const float*, kWindows> a_rows, zero_rows;
    std::array<float*, kWindows> c_rows;
    zero_rows.fill(zeros);
    std::array<std::array<YT*, kTile * kTile>, kWindows> out;
    std::array<std::array<const float*, kTile * kTile>, kWindows> res;
    for (int64_t task; (task = runs.next(thread_index())) >= 0;) {
      const int64_t w0 = task * kWindows, count = std::min(kWindows, windows - w0);
      // Input transform of the task's windows; where each one's outputs go.
      for (int64_t i = 0; i < count; ++i) {
        const int64_t w = w0 + i, img = w / per_image, jh = w % per_image / tiles_w, jw = w % tiles_w;
        std::array<const float*, kElements> d;
        for (int r = 0; r < kWindow; ++r)
          for (int c = 0; c < kWindow; ++c) {
            const int64_t ih = kTile * jh - s.h.pad_begin + r, iw = kTile * jw - s.w.pad_begin + c;
            const bool inside = ih >= 0 && ih < s.h.in && iw >= 0 && iw < s.w.in;
            const size_t k = static_cast<size_t>(kWindow * r + c);
            if constexpr (!halves) {
              d[k] = inside ? conv_input_pixel(x, map, s.h.in, s.w.in, cin, img, ih, iw) : zeros;
            } else if (!inside) {
              d[k] = zeros;
            } else {  // where conv_input_pixel finds it
              const int64_t at = map ? (img * map->src_h + map->rows[ih]) * map->src_w + map->cols[iw] : (img * s.h.in + ih) * s.w.in + iw;
              widen_halves(x + at * cin, wide + static_cast<int64_t>(k) * cin, cin);
              d[k] = wide + static_cast<int64_t>(k) * cin;
            }
          }
        input_transform(d.data(), cin, v + i * cin, e_stride);
        for (int a = 0; a < kTile; ++a)
          for (int b = 0; b < kTile; ++b) {
            const int64_t oh = kTile * jh + a, ow = kTile * jw + b;
            const bool inside = oh < s.h.out && ow < s.w.out;
            const int64_t offset = ((img * s.h.out + oh) * s.w.out + ow) * cout;
            out[static_cast<size_t>(i)][static_cast<size_t>(kTile * a + b)] = inside ? y + offset : nullptr;
            res[static_cast<size_t>(i)][static_cast<size_t>(kTile * a + b)] = inside && ep.residual ? ep.residual + offset : nullptr;
          }
      }
      for (int64_t j0 = 0; j0 < cout; j0 += kColBlock) {
        const int64_t width = std::min(kColBlock, cout - j0);
        // The 36 products, each started from a row of zeros.
        for (int64_t e = 0; e < kElements; ++e) {
          for (int64_t i = 0; i < count; ++i) {
            a_rows[static_cast<size_t>(i)] = v + e * e_stride + i * cin;
            c_rows[static_cast<size_t>(i)] = m + (e * count + i) * width;
          }
          gemm_store_rows(count, width, cin, a_rows.data(), transformed + e * matrix + j0, cout, zero_rows.data(), c_rows.data(), Epilogue{});
        }
        // Output transform, straight to the output pixels.
        for (int64_t i = 0; i < count; ++i) {
          std::array<const float*, kElements> mr;
          for (int64_t e = 0; e < kElements; ++e) mr[static_cast<size_t>(e)] = m + (e * count + i) * width;
          std::array<float*, kTile * kTile> o;
          std::array<const float*, kTile * kTile> r;
          for (size_t p = 0; p < o.size(); ++p) {
            YT* to = out[static_cast<size_t>(i)][p];
            if constexpr (halves) o[p] = to ? stage + static_cast<int64_t>(p) * width : nullptr;
            else o[p] = to ? to + j0 : nullptr;
            r[p] = res[static_cast<size_t>(i)][p] ? res[static_cast<size_t>(i)][p] + j0 : nullptr;
          }
          output_transform(mr.data(), width, o.data(), r.data(), ep, j0);
          if constexpr (halves)
            for (size_t p = 0; p < o.size(); ++p)
              if (o[p]) overflow = narrow_to_halves(o[p], out[static_cast<size_t>(i)][p] + j0, width) || overflow;
        }
      }
    }
  }
  return overflow;
}
}  // namespace

int64_t conv2d_winograd_workspace(const ConvShape& s, int threads, bool halves) {
  return saturating_product({std::max(1, threads), saturating_sum({thread_floats(s), halves ? halves_thread_floats(s) : 0})});
}

void conv2d_winograd(const ConvShape& s, const float* transformed, const float* x, float* y, const Epilogue& ep, int threads, float* workspace,
                     const ConvInputMap* map) {
  winograd_layer(s, transformed, x, y, ep, threads, workspace, map);
}

bool conv2d_winograd_halves(const ConvShape& s, const float* transformed, const uint16_t* x, uint16_t* y, const Epilogue& ep, int threads,
                            float* workspace, const ConvInputMap* map) {
  Epilogue no_residual = ep;
  no_residual.residual = nullptr;
  return winograd_layer(s, transformed, x, y, no_residual, threads, workspace, map);
}

}  // namespace edgegan::cpu

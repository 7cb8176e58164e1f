#include "kernels_cpu/conv2d/conv2d_winograd_f6.h"

#include <algorithm>
#include <array>

#include "kernels_cpu/activation/activation.h"
#include "kernels_cpu/common/simd_clones.h"
#include "kernels_cpu/common/thread_index.h"
#include "kernels_cpu/common/winograd_epilogue.h"
#include "kernels_cpu/conv2d/conv2d_winograd.h"
#include "kernels_cpu/gemm/gemm.h"

namespace edgegan::cpu {
namespace {

constexpr int kTile = 6, kWindow = 8;   // F(6x6, 3x3): 6x6 outputs from an 8x8 window
constexpr int64_t kElements = 64;       // the transformed window, e = 8i + j
// Output channels of a task's filter slice: one micro-kernel panel. 64 measured 4%
// slower on 64x64x256->256 at 1 thread (a 512 KiB slice shares L2 with the windows).
constexpr int64_t kPanel = 32;
constexpr int64_t kLanes = 16;          // channels the transforms hold in registers at once
constexpr int64_t kMaxChunk = 256;      // windows per chunk at most (the GEMMs' row pointers)
// A chunk's transformed windows at most: 121 windows of 256 channels (a 64x64 map) in one.
constexpr int64_t kMaxChunkInputBytes = int64_t{8} << 20;

int64_t round_up16(int64_t n) { return (n + 15) / 16 * 16; }
int64_t tiles(int64_t length) { return (length + kTile - 1) / kTile; }

struct Windows {
  int64_t per_row = 0, per_image = 0, count = 0, chunk = 0;
};
Windows windows_of(const ConvShape& s) {
  Windows w;
  w.per_row = tiles(s.w.out);
  w.per_image = saturating_product({tiles(s.h.out), w.per_row});
  w.count = saturating_product({s.batch, w.per_image});
  const int64_t per_window_bytes = saturating_product({kElements, std::max<int64_t>(1, s.in_channels), 4});
  w.chunk = std::clamp<int64_t>(std::min(w.count, kMaxChunkInputBytes / per_window_bytes), 1, kMaxChunk);
  return w;
}

// One thread's filter slice: 8 elements' [Cin][kPanel] planes, each a cache line past
// a multiple of 4 KiB apart (planes 64 KiB apart put the 8 rows a slice row writes in
// the same L1 sets).
int64_t slice_plane_floats(const ConvShape& s) { return saturating_product({s.in_channels, kPanel}) + 16; }
int64_t slice_floats(const ConvShape& s) { return saturating_product({kWindow, slice_plane_floats(s)}); }

#define EDGEGAN_ALWAYS_INLINE inline __attribute__((always_inline))

// v[e][c] (e = 8i + j, e_stride floats apart) = (Bᵀ d B)[i][j] for channels c0 .. c0 + n
// of the window whose pixel (r, col) starts at d[8r + col]. Bᵀ's rows, applied to z0..z7:
//   z0 - z6 + 21/4 (z4 - z2)
//   (z2 + z6 - 17/4 z4) ± (z1 + z5 - 17/4 z3)
//   (z2/4 - 5/4 z4 + z6) ± (z1/2 - 5/2 z3 + 2 z5)
//   (4 z2 - 5 z4 + z6) ± (2 z1 - 5/2 z3 + z5/2)
//   z7 - z1 + 21/4 (z3 - z5)
// The pairs share their two halves (the even and odd points).
struct InputRows {
  template <typename Load, typename Store>
  EDGEGAN_ALWAYS_INLINE static void apply(Load z, Store o) {
    const float a1 = z(2) + z(6) - 4.25f * z(4), b1 = z(1) + z(5) - 4.25f * z(3);
    const float a2 = 0.25f * z(2) - 1.25f * z(4) + z(6), b2 = 0.5f * z(1) - 2.5f * z(3) + 2.f * z(5);
    const float a3 = 4.f * z(2) - 5.f * z(4) + z(6), b3 = 2.f * z(1) - 2.5f * z(3) + 0.5f * z(5);
    o(0, z(0) - z(6) + 5.25f * (z(4) - z(2)));
    o(1, a1 + b1), o(2, a1 - b1);
    o(3, a2 + b2), o(4, a2 - b2);
    o(5, a3 + b3), o(6, a3 - b3);
    o(7, z(7) - z(1) + 5.25f * (z(3) - z(5)));
  }
};

EDGEGAN_ALWAYS_INLINE void input_transform_lanes(const float* const* d, int64_t c0, int64_t n, float* v, int64_t e_stride) {
  float t[kWindow][kWindow][kLanes];  // Bᵀ d: [row][column]
  for (int j = 0; j < kWindow; ++j)
    for (int64_t l = 0; l < n; ++l)
      InputRows::apply([&](int r) { return d[kWindow * r + j][c0 + l]; }, [&](int i, float x) { t[i][j][l] = x; });
  for (int i = 0; i < kWindow; ++i) {
    float* o = v + kWindow * i * e_stride + c0;
EDGEGAN_NO_ALIAS_LOOP
    for (int64_t l = 0; l < n; ++l)
      InputRows::apply([&](int c) { return t[i][c][l]; }, [&](int j, float x) { o[j * e_stride + l] = x; });
  }
}

EDGEGAN_SIMD_CLONES void input_transform(const float* const* d, int64_t cin, float* v, int64_t e_stride) {
  int64_t c0 = 0;
  for (; c0 + kLanes <= cin; c0 += kLanes) input_transform_lanes(d, c0, kLanes, v, e_stride);
  if (c0 < cin) input_transform_lanes(d, c0, cin - c0, v, e_stride);
}

// Aᵀ's rows, applied to z0..z7, with p_k = z(2k-1) + z(2k), q_k = z(2k-1) - z(2k):
//   z0 + p1 + p2 + p3,  q1 + 2 q2 + q3/2,  p1 + 4 p2 + p3/4,  q1 + 8 q2 + q3/8,
//   p1 + 16 p2 + p3/16,  q1 + 32 q2 + q3/32 + z7.
struct OutputRows {
  template <typename Load, typename Store>
  EDGEGAN_ALWAYS_INLINE static void apply(Load z, Store o) {
    const float p1 = z(1) + z(2), q1 = z(1) - z(2), p2 = z(3) + z(4), q2 = z(3) - z(4), p3 = z(5) + z(6), q3 = z(5) - z(6);
    o(0, z(0) + p1 + p2 + p3);
    o(1, q1 + 2.f * q2 + 0.5f * q3);
    o(2, p1 + 4.f * p2 + 0.25f * p3);
    o(3, q1 + 8.f * q2 + 0.125f * q3);
    o(4, p1 + 16.f * p2 + 0.0625f * p3);
    o(5, q1 + 32.f * q2 + 0.03125f * q3 + z(7));
  }
};

// One window's 6x6 outputs (out[6a + b], nullptr outside the image) from its products
// (m[e] the row of element e, `width` channels): f((Aᵀ M A)[a][b] + bias), then the
// residual's pixel (res[6a + b]; the array or an entry may be null: none) added.
template <typename F>
EDGEGAN_ALWAYS_INLINE void output_transform_lanes(const float* const* m, int64_t c0, int64_t n, float* const* out, const float* const* res,
                                                  const float* bias, F f) {
  float t[kTile][kWindow][kLanes];  // Aᵀ M: [output row][column]
  for (int j = 0; j < kWindow; ++j)
    for (int64_t l = 0; l < n; ++l)
      OutputRows::apply([&](int r) { return m[kWindow * r + j][c0 + l]; }, [&](int a, float x) { t[a][j][l] = x; });
  for (int a = 0; a < kTile; ++a) {
    float r[kTile][kLanes];
    for (int64_t l = 0; l < n; ++l) {
      const float b = bias ? bias[c0 + l] : 0.f;
      OutputRows::apply([&](int c) { return t[a][c][l]; }, [&](int col, float x) { r[col][l] = f(x + b); });
    }
    for (int b = 0; b < kTile; ++b)
      if (out[kTile * a + b]) store_window_pixel(out[kTile * a + b], res ? res[kTile * a + b] : nullptr, r[b], c0, n);
  }
}

template <typename F>
EDGEGAN_ALWAYS_INLINE void output_transform_with(const float* const* m, int64_t width, float* const* out, const float* const* res,
                                                 const float* bias, F f) {
  int64_t c0 = 0;
  for (; c0 + kLanes <= width; c0 += kLanes) output_transform_lanes(m, c0, kLanes, out, res, bias, f);
  if (c0 < width) output_transform_lanes(m, c0, width - c0, out, res, bias, f);
}

EDGEGAN_SIMD_CLONES void output_transform(const float* const* m, int64_t width, float* const* out, const float* const* res, const Epilogue& ep) {
  winograd_epilogue(ep, width, kTile * kTile, out, res, [&](auto f, const float* const* r) EDGEGAN_ALWAYS_INLINE_LAMBDA { output_transform_with(m, width, out, r, ep.bias, f); });
}

// G's rows, applied to z0..z2 (a column or a row of the 3x3 filter):
//   z0,  -2/9 (z0 + z2) ∓ 2/9 z1,  (z0/90 + 2/45 z2) ± z1/45,  (32/45 z0 + 8/45 z2) ± 16/45 z1,  z2
// Pairs share their even part. In floats: U is rounded a few times instead of once,
// a few units in its last place, far below what the input and output transforms add
// (their coefficients reach 21/4 and 32), and the slice is made 3x faster than in
// double (measured 1.6 -> 0.5 ms of the 64x64x256->256 layer's 15 at 1 thread).
struct FilterRows {
  template <typename Load, typename Store>
  EDGEGAN_ALWAYS_INLINE static void apply(Load z, Store o) {
    const float e1 = -2.f / 9 * (z(0) + z(2)), o1 = 2.f / 9 * z(1);
    const float e2 = 1.f / 90 * z(0) + 2.f / 45 * z(2), o2 = 1.f / 45 * z(1);
    const float e3 = 32.f / 45 * z(0) + 8.f / 45 * z(2), o3 = 16.f / 45 * z(1);
    o(0, z(0));
    o(1, e1 - o1), o(2, e1 + o1);
    o(3, e2 + o2), o(4, e2 - o2);
    o(5, e3 + o3), o(6, e3 - o3);
    o(7, z(2));
  }
  // Row I alone: apply's other rows are dropped once it is inlined with I fixed.
  template <int I, typename Load>
  EDGEGAN_ALWAYS_INLINE static float row(Load z) {
    float r = 0.f;
    apply(z, [&](int k, float x) {
      if (k == I) r = x;
    });
    return r;
  }
};

// Row I of U = G g Gᵀ (elements 8I .. 8I + 7) for the filter entries (ci, j0 + l), l < n
// <= kPanel, from weights [3][3][Cin][Cout] (`matrix` = Cin * Cout floats per tap), into
// u[j][l]. A whole panel row per call: in 16-lane pieces the loop overhead cost as much
// as the arithmetic.
template <int I>
EDGEGAN_ALWAYS_INLINE void filter_row_lanes(const float* w, int64_t matrix, int64_t n, float* const* u) {
  float gi[3][kPanel];  // (G g)[I][column]
  for (int c = 0; c < 3; ++c)
    for (int64_t l = 0; l < n; ++l) gi[c][l] = FilterRows::row<I>([&](int r) { return w[(3 * r + c) * matrix + l]; });
  float* __restrict o0 = u[0], *__restrict o1 = u[1], *__restrict o2 = u[2], *__restrict o3 = u[3];
  float* __restrict o4 = u[4], *__restrict o5 = u[5], *__restrict o6 = u[6], *__restrict o7 = u[7];
  float* const o[kWindow] = {o0, o1, o2, o3, o4, o5, o6, o7};
EDGEGAN_NO_ALIAS_LOOP
  for (int64_t l = 0; l < n; ++l) FilterRows::apply([&](int c) { return gi[c][l]; }, [&](int j, float x) { o[j][l] = x; });
}

// Elements 8I .. 8I + 7 of the filters for output channels [j0, j0 + width), every
// input channel, into slice[j][Cin][kPanel].
template <int I>
EDGEGAN_ALWAYS_INLINE void make_filter_row_of(const ConvShape& s, const float* weights, int64_t j0, int64_t width, float* slice) {
  const int64_t cin = s.in_channels, cout = s.out_channels, matrix = cin * cout, plane = slice_plane_floats(s);
  for (int64_t ci = 0; ci < cin; ++ci) {
    std::array<float*, kWindow> u;
    for (int j = 0; j < kWindow; ++j) u[static_cast<size_t>(j)] = slice + j * plane + ci * kPanel;
    const float* w = weights + ci * cout + j0;
    if (width == kPanel) filter_row_lanes<I>(w, matrix, kPanel, u.data());
    else filter_row_lanes<I>(w, matrix, width, u.data());
  }
}

EDGEGAN_SIMD_CLONES void make_filter_row(const ConvShape& s, const float* weights, int i, int64_t j0, int64_t width, float* slice) {
  switch (i) {
    case 0: return make_filter_row_of<0>(s, weights, j0, width, slice);
    case 1: return make_filter_row_of<1>(s, weights, j0, width, slice);
    case 2: return make_filter_row_of<2>(s, weights, j0, width, slice);
    case 3: return make_filter_row_of<3>(s, weights, j0, width, slice);
    case 4: return make_filter_row_of<4>(s, weights, j0, width, slice);
    case 5: return make_filter_row_of<5>(s, weights, j0, width, slice);
    case 6: return make_filter_row_of<6>(s, weights, j0, width, slice);
    default: return make_filter_row_of<7>(s, weights, j0, width, slice);
  }
}

}  // namespace

// Where it measured faster (bench/conv2d_winograd_bench.cpp, Zen 4, batch 1, best of 5,
// 1 thread / 2 threads, ms): against F(4x4, 3x3) with its filters made in the run, and
// against the direct path that took the layers with too few windows for that:
//   64x64x256->256 (121 windows)  F(4x4) 16.8 / 9.9    F(6x6) 15.6 / 7.9   (13.9 on a quieter run)
//   64x64x256->128 (121)          F(4x4) 7.9 / 5.8     F(6x6) 7.8 / 5.8
//   48x48x256->256 (64)           direct 25.1 / 13.5   F(6x6) 8.3 / 6.0
//   32x32x256->256 (36)           direct 11.0 / 5.6    F(6x6) 4.6 / 3.6
//   16x16x256->256 (9)            direct 2.5 / 1.3     F(6x6) 1.5 / 0.8
//   8x8x512->512 (4)              direct 3.7 / 1.4     F(6x6) 6.4 / 3.5
// Each task's slice transform is a fixed cost against its products for every window, so
// it needs a few windows (at 4 it is most of the time).
constexpr int64_t kMinChannels = 16;
constexpr int64_t kMinWindows = 9;

bool conv2d_winograd_f6_pays(const ConvShape& s, int64_t groups) {
  if (!conv2d_winograd_applies(s, groups) || s.in_channels < kMinChannels || s.out_channels < kMinChannels) return false;
  return !conv2d_winograd_keeps_filters(s) && windows_of(s).count >= kMinWindows;
}

int64_t conv2d_winograd_f6_workspace(const ConvShape& s, int threads) {
  const Windows wn = windows_of(s);
  return saturating_sum({round_up16(saturating_product({kElements, wn.chunk, s.in_channels})),
                         round_up16(saturating_product({kElements, wn.chunk, s.out_channels})),
                         round_up16(std::max(s.in_channels, kPanel)),
                         saturating_product({std::max(1, threads), round_up16(slice_floats(s))})});
}

void conv2d_winograd_f6(const ConvShape& s, const float* weights, const float* x, float* y, const Epilogue& ep, int threads, float* workspace,
                        const ConvInputMap* map) {
  const int64_t cin = s.in_channels, cout = s.out_channels;
  const Windows wn = windows_of(s);
  const int64_t e_in = wn.chunk * cin, e_out = wn.chunk * cout;  // element strides of V and M
  const int64_t panels = (cout + kPanel - 1) / kPanel, tasks = kWindow * panels;
  const int64_t plane = slice_plane_floats(s), per_thread_slice = round_up16(slice_floats(s));
  float* v = workspace;
  float* m = v + round_up16(kElements * e_in);
  float* zeros = m + round_up16(kElements * e_out);
  float* slices = zeros + round_up16(std::max(cin, kPanel));
  std::fill(zeros, zeros + std::max(cin, kPanel), 0.f);
  auto window_origin = [&](int64_t w, int64_t& img, int64_t& oh, int64_t& ow) {
    img = w / wn.per_image;
    oh = w % wn.per_image / wn.per_row * kTile;
    ow = w % wn.per_row * kTile;
  };
#pragma omp parallel num_threads(threads) if (threads > 1)
  for (int64_t w0 = 0; w0 < wn.count; w0 += wn.chunk) {
    const int64_t chunk = std::min(wn.chunk, wn.count - w0);
    // 1. The chunk's windows, transformed.
#pragma omp for schedule(static)
    for (int64_t i = 0; i < chunk; ++i) {
      int64_t img, oh, ow;
      window_origin(w0 + i, img, oh, ow);
      std::array<const float*, kElements> d;
      for (int r = 0; r < kWindow; ++r)
        for (int c = 0; c < kWindow; ++c) {
          const int64_t ih = oh - s.h.pad_begin + r, iw = ow - s.w.pad_begin + c;
          const bool inside = ih >= 0 && ih < s.h.in && iw >= 0 && iw < s.w.in;
          d[static_cast<size_t>(kWindow * r + c)] = inside ? conv_input_pixel(x, map, s.h.in, s.w.in, cin, img, ih, iw) : zeros;
        }
      input_transform(d.data(), cin, v + i * cin, e_in);
    }
    // 2. Per (row of elements, column panel): the filter slice, then its 8 products.
#pragma omp for schedule(dynamic, 1)
    for (int64_t task = 0; task < tasks; ++task) {
      const int row = static_cast<int>(task / panels);
      const int64_t j0 = task % panels * kPanel, width = std::min(kPanel, cout - j0);
      float* slice = slices + static_cast<int64_t>(thread_index()) * per_thread_slice;
      make_filter_row(s, weights, row, j0, width, slice);
      std::array<const float*, kMaxChunk> a_rows, zero_rows;
      std::array<float*, kMaxChunk> c_rows;
      std::fill(zero_rows.begin(), zero_rows.begin() + chunk, zeros);  // the products start from 0
      for (int64_t j = 0; j < kWindow; ++j) {
        const int64_t e = kWindow * row + j;
        for (int64_t i = 0; i < chunk; ++i) {
          a_rows[static_cast<size_t>(i)] = v + e * e_in + i * cin;
          c_rows[static_cast<size_t>(i)] = m + e * e_out + i * cout + j0;
        }
        gemm_store_rows(chunk, width, cin, a_rows.data(), slice + j * plane, kPanel, zero_rows.data(), c_rows.data(), Epilogue{});
      }
    }
    // 3. Each window's outputs, with the epilogue.
#pragma omp for schedule(static)
    for (int64_t i = 0; i < chunk; ++i) {
      int64_t img, oh0, ow0;
      window_origin(w0 + i, img, oh0, ow0);
      std::array<const float*, kElements> mr;
      for (int64_t e = 0; e < kElements; ++e) mr[static_cast<size_t>(e)] = m + e * e_out + i * cout;
      std::array<float*, kTile * kTile> o;
      std::array<const float*, kTile * kTile> r;
      for (int a = 0; a < kTile; ++a)
        for (int b = 0; b < kTile; ++b) {
          const int64_t oh = oh0 + a, ow = ow0 + b;
          const bool inside = oh < s.h.out && ow < s.w.out;
          const int64_t offset = ((img * s.h.out + oh) * s.w.out + ow) * cout;
          o[static_cast<size_t>(kTile * a + b)] = inside ? y + offset : nullptr;
          r[static_cast<size_t>(kTile * a + b)] = inside && ep.residual ? ep.residual + offset : nullptr;
        }
      output_transform(mr.data(), cout, o.data(), r.data(), ep);
    }
  }
}

}  // namespace edgegan::cpu

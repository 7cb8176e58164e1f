// AVX-512 micro-kernel: 8 rows x 32 columns = 16 zmm accumulators, 2 zmm of B
// per step, rows broadcast from memory. Partial column tiles use lane masks, so
// a head with 3 output channels loads exactly 3 floats of B per step.
// fp16 weights (B as IEEE halves) are widened in registers with VCVTPH2PS, part
// of AVX-512F: half the bytes of B stream from memory. The _store entry is the
// same tile (float B) ending in the fused store of gemm_ukernel.h (partial sums
// in, bias and activation, straight to the output rows).
// Compiled with -mavx512f -mfma and nothing shared inline (see the AVX2 file).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels_cpu/gemm/gemm_ukernel.h"

namespace edgegan::cpu {
namespace {

// Weight streaming (a tiny map with a huge [Cin][Cout], e.g. 4x4x1024 -> 512 k5 at
// batch 1): each B row is used by one or two tiles, so B comes from memory and the
// hardware prefetcher alone falls behind. On deep products, prefetch kPrefetchBytes
// ahead along B: 64 rows of a converter panel (ldb 32), at least kPrefetchMinRows rows
// of a plain [Cin][Cout] (rows kilobytes apart). Measured on 4x4x1024 -> 512 k5, 1
// thread: 3.0-3.3 ms without, 2.8 ms at 1 KiB ahead, 2.1 ms at 8 KiB, no better
// beyond. Tiles of one or two rows use each B row only once or twice whatever the
// depth (a 1x1 noise input's taps: DCGAN-64's first layer streams 3.3 MB of weights
// for 0.8 M MACs), so they prefetch too: that layer 0.082-0.085 -> 0.070-0.077 ms.
// Other shallow products (B in L2) only lose issue slots to it.
constexpr int64_t kPrefetchBytes = 8192, kPrefetchMinRows = 8;
constexpr int64_t kPrefetchMinK = 512;  // elements

inline __mmask16 lanes(int n) { return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1); }

// Columns [16 * half, 16 * half + 16) of B row `bp`, lanes >= n zero.
inline __m512 load_b(const float* bp, int half, __mmask16 m, bool full) {
  return full ? _mm512_loadu_ps(bp + 16 * half) : _mm512_maskz_loadu_ps(m, bp + 16 * half);
}
inline __m512 load_b(const uint16_t* bp, int half, __mmask16 m, bool full) {
  if (full) return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + 16 * half)));
  // No 16-bit masked load without AVX-512BW: stage the valid halves.
  alignas(32) uint16_t staged[16] = {};
  std::memcpy(staged, bp + 16 * half, static_cast<size_t>(__builtin_popcount(m)) * sizeof(uint16_t));
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(staged)));
}

// Where a fused-store tile goes: the partial sums it starts from, its output rows
// (which may be those same rows), and the epilogue (bias at the tile's column 0).
// Accumulating tiles get none.
struct StoreTo {
  const float* const* c;
  float* const* out;
  const Epilogue* ep;
};

// The fused store's epilogue: sums (+ bias, if any), then the activation, as
// store_with_epilogue computes them from the same sums; masked to the tile. One
// branch-free form for the three activations: v where v > 0 (everywhere for kNone),
// else v * alpha (kLeakyRelu) or +0 (kRelu, NaN included, as v > 0 ? v : 0 gives). A
// copy per activation ran 1% faster on 128x128x64 but tripled this file's code, more
// of which every process then touches.
// Inlined, so the accumulators stay in registers (through the stack, a call cost 3%
// of the 128x128x64 layer).
template <int MR, bool kFull>
__attribute__((always_inline)) inline void store_tile(const __m512* acc0, const __m512* acc1, int nr, __mmask16 m0, __mmask16 m1,
                                                      const StoreTo& to) {
  const Epilogue& ep = *to.ep;
  const __m512 zero = _mm512_setzero_ps(), alpha = _mm512_set1_ps(ep.alpha);
  const __mmask16 keep_all = ep.activation == Activation::kNone ? 0xFFFF : 0;
  const __mmask16 scale = ep.activation == Activation::kLeakyRelu ? 0xFFFF : 0;
  // The bias is loaded once, before the stores (which the compiler must assume alias it).
  const bool has_bias = ep.bias != nullptr;
  const __m512 bias0 = has_bias ? _mm512_maskz_loadu_ps(m0, ep.bias) : zero;
  const __m512 bias1 = has_bias ? _mm512_maskz_loadu_ps(m1, ep.bias + 16) : zero;
  auto finish = [&](__m512 sum, __m512 bias) {
    const __m512 v = has_bias ? _mm512_add_ps(sum, bias) : sum;
    const __mmask16 keep = _kor_mask16(_mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ), keep_all);
    return _mm512_mask_blend_ps(keep, _mm512_maskz_mul_ps(scale, v, alpha), v);
  };
  if constexpr (kFull) {  // whole tiles (nr == 32): plain stores
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      _mm512_storeu_ps(to.out[i], finish(acc0[i], bias0));
      _mm512_storeu_ps(to.out[i] + 16, finish(acc1[i], bias1));
    }
  } else {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      _mm512_mask_storeu_ps(to.out[i], m0, finish(acc0[i], bias0));
      if (nr > 16) _mm512_mask_storeu_ps(to.out[i] + 16, m1, finish(acc1[i], bias1));
    }
  }
}

template <int MR, bool kFull, bool kPrefetch, bool kStore, typename BT>
void tile(int64_t k, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c, const StoreTo* to) {
  const __mmask16 m0 = lanes(nr), m1 = lanes(nr - 16);
  const int64_t prefetch_ahead = kPrefetch ? std::max(kPrefetchMinRows, kPrefetchBytes / (ldb * static_cast<int64_t>(sizeof(BT)))) * ldb : 0;
  __m512 acc0[MR], acc1[MR];
  // A fused store starts from the partial sums (loaded before the loop: about 3% faster
  // on the 128x128x64 layer than adding them after it); an accumulating tile adds its
  // sum to them at the end.
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    if constexpr (kStore) acc0[i] = _mm512_maskz_loadu_ps(m0, to->c[i]), acc1[i] = _mm512_maskz_loadu_ps(m1, to->c[i] + 16);
    else acc0[i] = acc1[i] = _mm512_setzero_ps();
  }
  if (kFull || nr > 16) {
    for (int64_t p = 0; p < k; ++p) {
      const BT* bp = b + p * ldb;
      if constexpr (kPrefetch) {
        _mm_prefetch(reinterpret_cast<const char*>(bp + prefetch_ahead), _MM_HINT_T0);
        if constexpr (sizeof(BT) == 4) _mm_prefetch(reinterpret_cast<const char*>(bp + prefetch_ahead + 16), _MM_HINT_T0);
      }
      const __m512 b0 = load_b(bp, 0, m0, kFull), b1 = load_b(bp, 1, m1, kFull);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m512 av = _mm512_set1_ps(a[i][p]);
        acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
        acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
      }
    }
  } else {  // at most 16 columns: one vector of B per step
    for (int64_t p = 0; p < k; ++p) {
      const __m512 b0 = load_b(b + p * ldb, 0, m0, false);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) acc0[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i][p]), b0, acc0[i]);
    }
  }
  if constexpr (kStore) {
    store_tile<MR, kFull>(acc0, acc1, nr, m0, m1, *to);
  } else {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      _mm512_mask_storeu_ps(c[i], m0, _mm512_add_ps(_mm512_maskz_loadu_ps(m0, c[i]), acc0[i]));
      if (nr > 16) _mm512_mask_storeu_ps(c[i] + 16, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, c[i] + 16), acc1[i]));
    }
  }
}

template <int MR, bool kStore, typename BT>
void tile_any(int64_t k, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c, const StoreTo* to) {
  const bool streaming = (k >= kPrefetchMinK || MR <= 2) && ldb > 0;
  if (nr == 32 && streaming) tile<MR, true, true, kStore>(k, nr, a, b, ldb, c, to);
  else if (nr == 32) tile<MR, true, false, kStore>(k, nr, a, b, ldb, c, to);
  else tile<MR, false, false, kStore>(k, nr, a, b, ldb, c, to);
}

// c: the rows accumulated into (to == nullptr), or unused when the tile is stored (to).
template <bool kStore, typename BT>
void kernel(int64_t k, int mr, int nr, const float* const* a, const BT* b, int64_t ldb, float* const* c, const StoreTo* to) {
  switch (mr) {
    case 1: return tile_any<1, kStore>(k, nr, a, b, ldb, c, to);
    case 2: return tile_any<2, kStore>(k, nr, a, b, ldb, c, to);
    case 3: return tile_any<3, kStore>(k, nr, a, b, ldb, c, to);
    case 4: return tile_any<4, kStore>(k, nr, a, b, ldb, c, to);
    case 5: return tile_any<5, kStore>(k, nr, a, b, ldb, c, to);
    case 6: return tile_any<6, kStore>(k, nr, a, b, ldb, c, to);
    case 7: return tile_any<7, kStore>(k, nr, a, b, ldb, c, to);
    default: return tile_any<8, kStore>(k, nr, a, b, ldb, c, to);
  }
}

}  // namespace

void gemm_ukernel_8x32__avx512(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                               float* const* c) {
  kernel<false>(k, mr, nr, a, b, ldb, c, nullptr);
}

void gemm_ukernel_8x32__avx512_f16w(int64_t k, int mr, int nr, const float* const* a, const uint16_t* b, int64_t ldb,
                                    float* const* c) {
  kernel<false>(k, mr, nr, a, b, ldb, c, nullptr);
}

void gemm_ukernel_8x32__avx512_store(int64_t k, int mr, int nr, const float* const* a, const float* b, int64_t ldb,
                                     const float* const* c, float* const* out, const Epilogue& ep) {
  const StoreTo to{c, out, &ep};
  kernel<true>(k, mr, nr, a, b, ldb, nullptr, &to);
}

}  // namespace edgegan::cpu

// Output lines asked for ahead of the stores, for the split transposed convolution's paths.
//
// An output larger than the caches is written to lines that are in none of them: a
// tile that asks for its output lines before it computes has them when it stores,
// instead of stalling on each store (0-1.3% of the 128x128x64 layer, whose output is
// 16 MB, at 1 and 2 threads). Smaller outputs stay in the caches between calls, where
// the requests would only take issue slots.
#pragma once

#include <cstdint>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"
#include "kernels_common/conv_geometry.h"

namespace edgegan::cpu {

constexpr int64_t kPrefetchOutputBytes = int64_t{4} << 20;  // outputs past the L2s (1 MiB per core here)

// The layer's output (fp32, NHWC) is larger than the caches hold between calls.
inline bool output_misses_caches(const ConvShape& s) {
  return saturating_product({s.batch, s.h.out, s.w.out, s.out_channels, 4}) > kPrefetchOutputBytes;
}

// Asks for the cache lines of `floats` output floats from `row` on, for writing.
inline void prefetch_output_row(float* row, int64_t floats) {
  for (int64_t c = 0; c < floats; c += 16) __builtin_prefetch(row + c, 1, 3);
}

}  // namespace edgegan::cpu

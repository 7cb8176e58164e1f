// A blocked matrix transpose on the host: weights repacked once for a kernel's layout
// (both backends) and the CPU GEMM's packing.
#pragma once

#include <cstdint>

namespace edgegan::kernels {

// dst[j][i] = src[i][j] for i < rows, j < cols (leading dimensions in elements),
// in cache-sized blocks. Callers that multiply by the same transposed operand for
// many row panels transpose it once with this and call gemm_accumulate, instead of
// letting gemm_accumulate_bt re-pack it for every panel.
void transpose_matrix(int64_t rows, int64_t cols, const float* src, int64_t ld_src, float* dst, int64_t ld_dst);

}  // namespace edgegan::kernels

// The CPU kernels name these unqualified, and callers as cpu::; one definition.
namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu

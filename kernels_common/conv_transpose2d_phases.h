// The split of a 2-D transposed convolution (ONNX / PyTorch semantics) into
// stride×stride phases (docs/phase-split.md), as both backends and the converter see it.
//
// Per axis: o = i*stride - pad_begin + tap*dilation. Output position o belongs
// to phase r = (o + pad_begin) mod stride. Phase r is a dense stride-1
// correlation: with q = (o + pad_begin - r) / stride it reads input i = q - offset
// through every tap whose tap*dilation ≡ r (mod stride), offset = (tap*dilation - r)/stride.
// No inserted zero is ever read; taps whose input falls outside [0, in) are skipped.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels_common/conv_geometry.h"

namespace edgegan::kernels {

// One phase of one axis.
struct AxisPhase {
  int64_t residue = 0;            // r
  std::vector<int64_t> taps;      // original kernel indices, by increasing offset
  std::vector<int64_t> offsets;   // input offset of each tap: i = q - offset
  int64_t q_begin = 0;            // first q with 0 <= o < out
  int64_t q_end = 0;              // one past the last (q_end <= q_begin: phase has no outputs)
  int64_t output_of(int64_t q, const ConvAxis& axis) const {
    return q * axis.stride + residue - axis.pad_begin;
  }
};

// Splits one axis into its `stride` phases (residue = index).
std::vector<AxisPhase> split_conv_transpose_axis(const ConvAxis& axis);

// Layout of one tap's [rows][cols] weight matrix (Cin x Cout), as written by the
// converter: column panels of `panel` columns, the last one narrower, each stored
// [rows][width] one after the other. A register tile of the GEMM reads columns of one
// panel only, so its weights are one contiguous stream instead of 128-byte pieces
// kilobytes apart; that is what lets a layer whose weights do not fit the caches
// (4x4x1024 -> 512 k5: 52 MB) read them at the memory's streaming rate.
// panel <= 0 or >= cols: one panel, plain row-major [rows][cols].
constexpr int64_t kWeightPanelColumns = 32;  // the widest micro-kernel tile (8x32 AVX-512)

struct PanelLayout {
  int64_t rows = 0, cols = 0, panel = 0;
  PanelLayout(int64_t r, int64_t c, int64_t p) : rows(r), cols(c), panel(p <= 0 || p > c ? c : p) {}
  int64_t panel_begin(int64_t col) const { return panel > 0 ? col / panel * panel : 0; }
  // Columns of the panel holding `col`: its leading dimension.
  int64_t width(int64_t col) const { return std::min(panel, cols - panel_begin(col)); }
  // One past the last column of the panel holding `col`.
  int64_t panel_end(int64_t col) const { return panel_begin(col) + width(col); }
  // Element (row, col); column col's first element is at index(0, col).
  int64_t index(int64_t row, int64_t col) const {
    const int64_t p0 = panel_begin(col);
    return p0 * rows + row * std::min(panel, cols - p0) + (col - p0);
  }
};

// The split weights as the file stores them: one packed sub-kernel per phase,
// row-major (ph, pw): per tap ([taps_h][taps_w]) a Cin x Cout matrix in
// PanelLayout(Cin, Cout, panel_columns).
struct ConvTranspose2DSubKernels {
  std::vector<AxisPhase> phases_h, phases_w;
  std::vector<const float*> sub_kernels;  // stride_h*stride_w entries; nullptr when a phase has no taps
  // fp16 weights (IEEE halves, same layout): when non-empty, the split kernel reads
  // these instead of sub_kernels and widens them in registers. Only the split
  // forward reads them; the baselines and the backward kernels take float.
  std::vector<const uint16_t*> sub_kernels_f16;
  int64_t panel_columns = 0;  // 0: plain [Cin][Cout] per tap
  bool fp16() const { return !sub_kernels_f16.empty(); }
  PanelLayout tap_layout(const ConvShape& s) const { return {s.in_channels, s.out_channels, panel_columns}; }
};

// Reassembles the whole kernel from the split sub-kernels, once at session
// creation, for the baselines: kTapsFirst [kh][kw][Cin][Cout] (zero insertion) or
// kChannelsFirst [Cin][kh][kw][Cout] (col2im); and once per backward call as
// kTapsFirstTransposed [kh][kw][Cout][Cin], the packed weights of the convolution that
// computes the input gradient. Writes straight into `out` (kh*kw*Cin*Cout floats).
enum class FullKernelLayout { kTapsFirst, kChannelsFirst, kTapsFirstTransposed };
void assemble_conv_transpose2d_full_kernel(const ConvShape& shape, const ConvTranspose2DSubKernels& w, FullKernelLayout layout, float* out);

// Grouped layers (input and output channels in `groups` equal slices, each phase's
// sub-kernel holding the groups one after the other): one group's shape, Cin/groups in
// and Cout/groups out, and each group's view of the sub-kernels (pointers offset to the
// group's part of every phase; float or fp16 as `w`).
ConvShape conv_transpose2d_group_shape(const ConvShape& shape, int64_t groups);
std::vector<ConvTranspose2DSubKernels> conv_transpose2d_group_sub_kernels(const ConvShape& shape, int64_t groups,
                                                                          const ConvTranspose2DSubKernels& w);

}  // namespace edgegan::kernels

// The CPU kernels name these unqualified, and callers as cpu::; one definition.
namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu

// The CPU's side of the transposed convolution's split (docs/phase-split.md): its
// weights with what a session prepares for the faster forms, and the packing of ONNX
// weights into phase sub-kernels. The split itself (phases, panels, the sub-kernels as
// the file stores them) is kernels_common/conv_transpose2d_phases.h.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels_common/conv_transpose2d_phases.h"

namespace edgegan::cpu {

struct PixelLanesPlan;  // conv_transpose2d_pixel_lanes.h

// The split weights as the CPU kernels take them: the sub-kernels (above) and what a
// session prepared for the faster forms.
struct ConvTranspose2DWeights : ConvTranspose2DSubKernels {
  // A head prepared once by the session for the pixel-lanes kernel
  // (conv_transpose2d_pixel_lanes.h): its plan (not ok: the dot path), and its weights
  // packed in that kernel's order. nullptr: the split kernel plans, or packs, per call.
  const PixelLanesPlan* pixel_lanes_plan = nullptr;
  const float* pixel_lanes = nullptr;
  // A k = 2*stride layer's filters transformed once by the session for the Winograd
  // form (conv_transpose2d_winograd.h), where it pays: the split kernel then runs that
  // form. nullptr: the sub-kernels above, as they are.
  const float* winograd = nullptr;
  // The Winograd form with its filters made a slice at a time from the sub-kernels
  // (conv_transpose2d_winograd_sliced), where no whole filters are: the split kernel
  // then runs that form.
  bool winograd_sliced = false;
};

// Rewrites `count` consecutive rows x cols matrices from one panel width to another
// (e.g. a weight gradient computed plain into the file's panels).
void repanel_matrices(int64_t count, int64_t rows, int64_t cols, int64_t from_panel, int64_t to_panel, const float* src,
                      float* dst);

// Packs ONNX-layout weights W[Cin][Cout][kh][kw] into the per-phase sub-kernels,
// each tap in PanelLayout(Cin, Cout, panel_columns) (the converter writes
// kWeightPanelColumns). Returns one vector per phase.
std::vector<std::vector<float>> pack_conv_transpose2d_weights(const ConvShape& shape,
                                                          const std::vector<AxisPhase>& phases_h,
                                                          const std::vector<AxisPhase>& phases_w,
                                                          const float* onnx_weights, int64_t panel_columns = 0);

}  // namespace edgegan::cpu

// The shape of a DepthToSpace / SpaceToDepth between NHWC maps (ONNX DepthToSpace,
// SpaceToDepth; PyTorch's PixelShuffle and PixelUnshuffle): the depth map
// [N][H][W][C*b*b] and the space map [N][H*b][W*b][C], b = block. Both backends'
// kernels take it.
#pragma once

#include <cstdint>

namespace edgegan::kernels {

enum class DepthToSpaceMode : int { kDCR = 0, kCRD = 1 };  // numbered as schema::DepthToSpaceMode

struct DepthToSpaceShape {
  int64_t batch = 1;
  int64_t height = 1, width = 1;  // of the depth map
  int64_t channels = 1;           // of the space map (the depth map has channels*block*block)
  int64_t block = 1;
  DepthToSpaceMode mode = DepthToSpaceMode::kDCR;
};

}  // namespace edgegan::kernels

// The CPU kernels name these unqualified, and callers as cpu::; one definition.
namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu

// DepthToSpace / SpaceToDepth between NHWC maps (ONNX DepthToSpace, SpaceToDepth;
// PyTorch's PixelShuffle and PixelUnshuffle): the depth map [N][H][W][C*b*b] and the
// space map [N][H*b][W*b][C], b = block. Space pixel (h, w) channel c is depth pixel
// (h/b, w/b) channel
//   DCR: ((h%b)*b + w%b)*C + c          (ONNX's default; SpaceToDepth's order)
//   CRD: c*b*b + (h%b)*b + w%b          (PixelShuffle / PixelUnshuffle)
// Either direction is a permutation, so each one's backward is the other direction.
#pragma once

#include <cstdint>

#include "kernels_common/depth_to_space_shape.h"

namespace edgegan::cpu {

// to_space: x is the depth map and y the space map; else the reverse.
void depth_to_space_reference(const DepthToSpaceShape& s, bool to_space, const float* x, float* y);

// Parallel over batch x space rows. DCR moves b*C contiguous floats per depth pixel,
// CRD gathers/scatters with stride b*b. accumulate: y += the result (a backward that
// adds into a gradient another reader wrote first). Each output element is written
// once: deterministic for any thread count.
void depth_to_space(const DepthToSpaceShape& s, bool to_space, const float* x, float* y, bool accumulate, int threads);

// An fp16 session's forward: the same permutation of halves (no rounding, no overflow).
void depth_to_space_halves(const DepthToSpaceShape& s, bool to_space, const uint16_t* x, uint16_t* y, int threads);

}  // namespace edgegan::cpu

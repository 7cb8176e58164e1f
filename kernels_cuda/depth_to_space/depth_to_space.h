// DepthToSpace / SpaceToDepth between NHWC maps on the GPU (kernels_cpu/depth_to_space/
// depth_to_space.h defines both and the DCR / CRD channel orders): one thread per
// output float gathers its input float.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels_common/depth_to_space_shape.h"

namespace edgegan::cuda {

// to_space: x is the depth map and y the space map; else the reverse (x != y).
void depth_to_space(const kernels::DepthToSpaceShape& s, bool to_space, const float* x, float* y, cudaStream_t stream);

}  // namespace edgegan::cuda

// MatMul on Vulkan: no shader yet, so a model with it is refused when its session is made,
// naming the layer (supports() asks this constructor), and runs on the CPU or CUDA.
#include "engine/backend/vulkan/vulkan_kernel.h"

namespace edgegan::vulkan {

template <>
std::unique_ptr<OpKernel> create_kernel<schema::OpKind_MatMul>(const KernelArgs&, Context&) {
  throw KernelRefusal("the Vulkan backend has no kernel for products of two run-time tensors (MatMul) yet");
}

}  // namespace edgegan::vulkan

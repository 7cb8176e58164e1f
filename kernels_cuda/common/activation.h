// The activations as the CUDA kernels take them: the enum and its parameters are every
// backend's (kernels_common/activation.h); activation.cuh has the device definitions.
#pragma once

#include "kernels_common/activation.h"

namespace edgegan::cuda {

using kernels::Activation;
using kernels::ActivationParams;
using kernels::kActivationCount;

}  // namespace edgegan::cuda

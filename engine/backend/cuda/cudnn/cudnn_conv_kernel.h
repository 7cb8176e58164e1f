// The tactic of one convolution layer on CUDA, chosen by measurement when the session is
// made: the project's kernel (`own`, already built) against cuDNN graphs of the layer
// (conv_graph_spec.h), each with the deterministic engine configurations cuDNN's
// heuristics offer; the faster one runs. Only when the CUDA backend was asked for it
// (EDGEGAN_CUDNN=1: not yet proved on a GPU), cuDNN loads, and the layer is one the
// graphs express; otherwise `own` is returned as it is.
#pragma once

#include <memory>

#include "engine/ops/op_def.h"

namespace edgegan::cuda::cudnn {

std::unique_ptr<OpKernel> choose_conv_tactic(const KernelArgs& args, std::unique_ptr<OpKernel> own);

// Whether EDGEGAN_CUDNN=1 asks the CUDA backend to time cuDNN's convolutions.
bool cudnn_tactics_requested();

}  // namespace edgegan::cuda::cudnn

// StyleGAN2's modulated convolutions, as converter/stylegan_patterns.cpp leaves both
// exported forms: the input scaled by the style (Binary Mul by a Reshape of the style
// [N, Cin] to [N,1,1,Cin]), a constant-weight Conv2D or ConvTranspose2D, then, when
// demodulated, the output scaled by 1/sqrt(Dense(style^2) + eps) reshaped alike (the
// Dense's weights are the squared sums of the conv's weights, its bias eps). Each such
// chain becomes one ModulatedConv2D op (engine/ops/modulated_conv2d.cpp): weights
// constant, the transposed one still stored split into phases. A depthwise Conv2D
// without bias between the convolution and the demodulation (the FIR blur after the
// up-sampling conv) stays after the op: a per-channel scale commutes with it.
#pragma once

#include "converter/egan_ir.h"

namespace edgegan::converter {

// Rewrites every such chain, drops the ops nothing reads any more; returns the number rewritten.
int fuse_modulated_convs(IrModel& model);

}  // namespace edgegan::converter

// The sliding-channel convolution's inner loops built with this file's ISA flags.
#include "kernels_cpu/sliding_channel_conv/sliding_channel_conv_ukernel.h"

namespace edgegan::cpu {
namespace {
#include "kernels_cpu/sliding_channel_conv/sliding_channel_conv_ukernel.inc"
}  // namespace

extern const SlidingChannelUkernels kSlidingChannelAvx2{forward_tile, input_tiles, weights_chunk};

}  // namespace edgegan::cpu

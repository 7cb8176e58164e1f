// The channel-stack forms of a sliding-channel convolution as torch exports them
// (x[:, idx] as Gather, or channel Slices joined by Concat, feeding a Conv with
// group = Cout), for the Gather and Slice lowerings that see them first.
#pragma once

#include <string>
#include <vector>

#include "converter/lowering.h"

namespace edgegan::converter {

// `stack` (an ONNX value) holds channels `channels` (ONNX axis 1, in order) of
// `source`'s run-time input 0, a rank-4 map. When its one reader is a Conv with group =
// Cout whose per-group windows of these channels are the cyclic windows
// start(o) = o * s mod Cin of width gw, lowers that Conv as one SlidingChannelConv
// reading source's input 0, claims the Conv, and returns true; else changes nothing.
bool lower_sliding_channel_stack(const Node& source, const std::string& stack, const std::vector<int64_t>& channels, Lowering& l);

// Node n's output 0 is channels `channels` of its run-time input 0 (a rank-4 map):
// Slice ops over the runs of consecutive channels, joined by a Concat on the channel axis.
void lower_channel_gather(const Node& n, const std::vector<int64_t>& channels, Lowering& l);

}  // namespace edgegan::converter

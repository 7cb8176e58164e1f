// Serializes the engine IR into .egan bytes: packs conv weights to
// [kh][kw][Cin][Cout], splits every transposed convolution into its
// stride_h*stride_w phase sub-kernels, and lays weights out 64-byte aligned
// after the flatbuffer (see engine/format/egan.fbs for the file layout).
#pragma once

#include <cstdint>
#include <vector>

#include "converter/egan_ir.h"

namespace edgegan::converter {

// fp16_conv_transpose_weights: store the transposed-convolution sub-kernels as IEEE
// halves (round to nearest even); everything else stays float32.
std::vector<uint8_t> write_egan(const IrModel& model, const std::string& producer, bool fp16_conv_transpose_weights = false);

}  // namespace edgegan::converter

// edgegan-convert as a library: ONNX bytes in, .egan bytes out, plus a
// human-readable summary. The CLI (main.cpp) and the tests both use this.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "converter/errors.h"

namespace edgegan::converter {

struct ConvertResult {
  std::vector<uint8_t> egan;   // the file image (already verified by loading it back)
  std::string summary;         // what was written, one op per line
};

// Precision of the stored transposed-convolution weights (the bulk of a
// generator's bytes). fp16 halves the file and the weight traffic; the kernels
// widen to float in registers and compute in fp32. Biases and every other op's
// weights stay fp32.
enum class WeightPrecision { kFp32, kFp16 };
WeightPrecision weight_precision_from_string(const std::string& name);  // "fp32" | "fp16"; throws ConvertError

struct ConvertOptions {
  WeightPrecision weights = WeightPrecision::kFp32;
  // Extra metadata entries written into the file, e.g. the pixel normalisation an
  // image-to-image model expects ("input_mean" = "0.5,0.5,0.5", "input_std", and the
  // same for "output_"), which `edgegan translate/upscale` read.
  std::vector<std::pair<std::string, std::string>> metadata;
  // Checkpoints only: blend the weights with those of a second checkpoint of the same
  // architecture, (1 - blend_t)·input + blend_t·blend_path (empty: none).
  std::string blend_path;
  float blend_t = 0.f;
};

// `source_name` is recorded in the metadata (e.g. the input file's name).
ConvertResult convert_onnx(const std::string& onnx_bytes, const std::string& source_name, const ConvertOptions& options = {});

// A PyTorch checkpoint (zip or legacy torch.save) or a .safetensors file: its tensors read
// without running anything, its architecture detected from them (converter/checkpoint/).
ConvertResult convert_checkpoint(const std::string& bytes, const std::string& source_name, const ConvertOptions& options = {});

// Reads `onnx_path` (ONNX, or a checkpoint recognised by its first bytes unless the name
// ends in .onnx), converts, and writes `egan_path` atomically (never a partial file).
ConvertResult convert_file(const std::string& onnx_path, const std::string& egan_path, const ConvertOptions& options = {});

}  // namespace edgegan::converter

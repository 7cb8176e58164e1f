// Reads a checkpoint's tensors without running anything: PyTorch's zip archives
// (.pth/.pt/.ckpt from torch.save), its legacy pre-zip format, and .safetensors.
// Wrappers (params_ema, params, state_dict, model) and DataParallel's "module."
// prefix are taken off. Every failure is one ConvertError naming the file and the reason.
#pragma once

#include <string>
#include <string_view>

#include "converter/checkpoint/state_dict.h"

namespace edgegan::converter::checkpoint {

// Whether `bytes` starts as one of the three formats (the CLI's choice between this and ONNX).
bool looks_like_checkpoint(std::string_view bytes);

StateDict read_checkpoint(std::string_view bytes, const std::string& name);

// The formats, each throwing ConvertError with the reason only (read_checkpoint adds the name).
StateDict read_torch_zip(std::string_view bytes);
StateDict read_torch_legacy(std::string_view bytes);
StateDict read_safetensors(std::string_view bytes);

}  // namespace edgegan::converter::checkpoint

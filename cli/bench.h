// `edgegan bench`: median time per layer and for the whole model, so any converted
// model is measured the same way (and peers' figures can sit beside it).
#pragma once

#include <cstdint>
#include <string>

namespace edgegan_cli {

struct BenchArgs {
  std::string model;
  int batch = 1;
  int threads = 0;
  std::string algo = "split";
  std::string backend = "cpu";
  std::string precision;  // fp32, tf32 or fp16; "": the backend's default (cli/precision_choice.h)
  int device = 0;  // Vulkan: the physical device's index
  int repeat = 30;
  int warmup = 3;
  bool json = false;
  int64_t input_height = 0, input_width = 0;  // > 0: an image model run at this input size (as translate/upscale would)
};

int bench(const BenchArgs& args);

}  // namespace edgegan_cli

// `edgegan finetune`: adapts a converted generator to a set of images on the device.
//   with --discriminator: adversarial steps of the DCGAN recipe (edgegan::gan_step), D tuned too;
//   without: each image is paired with a fixed noise vector and G learns to reproduce it
//   (--loss mse|l1), which needs no discriminator but only fits the given images;
//   with --targets: paired steps for image-to-image and super-resolution models, --data
//   holding the model's inputs and --targets the outputs wanted for them (--loss mse|l1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgegan_cli {

struct FinetuneArgs {
  std::string generator, discriminator, data, labels, targets, output, discriminator_output;
  int64_t steps = 200;
  int batch = 16;
  int threads = 0;
  std::string optimizer = "adam";  // adam | sgd
  float learning_rate = 2e-4f, beta1 = 0.5f, beta2 = 0.999f, momentum = 0.f;
  float discriminator_learning_rate = 0.f;  // 0: the generator's
  std::vector<int> frozen_generator_ops;     // op indices as `edgegan inspect` lists them
  std::string loss = "mse";  // reconstruction loss without a discriminator: mse | l1
  uint64_t seed = 0;
  bool quiet = false;
};

int finetune(const FinetuneArgs& args);

}  // namespace edgegan_cli

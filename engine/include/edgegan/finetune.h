// The fine-tuning loop of `edgegan finetune`, for any caller (the CLI, the Python
// module, your program): shuffled batches over a set of images, each step either
// adversarial (gan_step with a discriminator trainer) or, without one, a
// reconstruction step in which each image keeps one noise vector.
//
//   edgegan::Trainer g(model, {.batch = 16, .learning_rate = 1e-3f});
//   auto result = edgegan::finetune(g, nullptr, images, {}, {.steps = 100},
//                                   [](const edgegan::FinetuneProgress& p) { return true; });
//   g.save("tuned.egan");
//
// The trainers' options (batch, optimizer, learning rate, frozen ops) apply; the
// discriminator, if given, must have the generator's batch.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "edgegan/edgegan.h"
#include "edgegan/trainer.h"

namespace edgegan {

struct FinetuneOptions {
  int64_t steps = 200;
  Loss loss = Loss::kMse;  // the reconstruction loss without a discriminator (kMse or kL1)
  uint64_t seed = 0;       // the batch order and the noise
};

// What the callback sees after each step. Losses are means over the last 10 steps.
struct FinetuneProgress {
  int64_t step = 0;              // 1 .. steps
  int64_t steps = 0;
  double generator_loss = 0;     // G's adversarial loss, or the reconstruction loss
  double discriminator_loss = 0; // D's loss on real + fake; 0 without a discriminator
  double seconds = 0;            // since the first step began
};

struct FinetuneResult {
  int64_t steps = 0;                         // steps taken (fewer when the callback stopped the run)
  std::vector<double> generator_losses;      // one per step
  std::vector<double> discriminator_losses;  // one per step, adversarial runs only
  double seconds = 0;
};

// Runs options.steps steps and returns the loss history; the tuned weights stay in the
// trainers (save them with Trainer::save). `images` holds N samples of the generator's
// output in its storage layout (NHWC images, float32, in the output's value range);
// `labels` one class per image for a conditional generator, none otherwise. After each
// step `on_step` (if set) is called; returning false stops the run there. Throws Error
// for data the generator cannot take, and when a loss becomes NaN or infinite.
FinetuneResult finetune(Trainer& generator, Trainer* discriminator, const Tensor& images, const std::vector<int64_t>& labels,
                        const FinetuneOptions& options, const std::function<bool(const FinetuneProgress&)>& on_step = {});

// Supervised fine-tuning of an image-to-image or super-resolution generator on pairs:
// each step takes a shuffled batch of `inputs` (samples of the model's one float input,
// in its storage layout) and moves the model's output towards the matching `targets`
// (samples of its one output, storage layout) under options.loss (kMse or kL1).
// Throws Error for pairs the model cannot take (shapes, counts, non-finite values).
FinetuneResult finetune_paired(Trainer& model, const Tensor& inputs, const Tensor& targets, const FinetuneOptions& options,
                               const std::function<bool(const FinetuneProgress&)>& on_step = {});

}  // namespace edgegan

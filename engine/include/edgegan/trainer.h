// Fine-tuning a loaded model on the device: forward with saved activations,
// backward through every op, SGD or Adam, and the tuned weights written back
// into a valid .egan (transposed convolutions stay split into their phases).
//
//   auto model = edgegan::Model::load("generator.egan");
//   edgegan::Trainer trainer(model, {.batch = 16, .optimizer = edgegan::Optimizer::kAdam, .learning_rate = 2e-4f});
//   auto images = trainer.forward({z});                  // storage layout (NHWC)
//   trainer.backward({d_loss_d_images});                 // accumulates parameter gradients
//   trainer.step();                                      // optimizer update, gradients cleared
//   trainer.save("tuned.egan");                          // atomic
//
// BatchNorm was folded into the producer's weights and bias by the converter, so
// fine-tuning adjusts those folded affine weights: running statistics are not
// updated (the model trains as in PyTorch's eval mode). Ops without a bias stay
// without one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "edgegan/edgegan.h"

namespace edgegan {

enum class Optimizer { kSgd, kAdam };

// How the transposed convolutions back-propagate. kSplit (the product): dX as a strided
// conv of dY with the phase sub-kernels, dW per phase tap, no inserted zero touched.
// kZeroInsert: the baseline a zero-insertion engine runs (the full kernel over the
// zero-dilated input, every product with an inserted zero computed); same gradients.
enum class ConvTransposeBackward { kSplit, kZeroInsert };

struct TrainerOptions {
  int batch = 1;
  int threads = 0;  // 0: all cores
  Optimizer optimizer = Optimizer::kAdam;
  float learning_rate = 2e-4f;
  float momentum = 0.f;                 // SGD
  float beta1 = 0.5f, beta2 = 0.999f;   // Adam (the DCGAN setting)
  float eps = 1e-8f;                    // Adam
  float weight_decay = 0.f;
  ConvTransposeBackward conv_transpose_backward = ConvTransposeBackward::kSplit;
  // Ops (indices as `edgegan inspect` lists them) whose parameters stay fixed; gradients still
  // flow through them to earlier ops. E.g. adapt only a generator's first layer to new data.
  std::vector<int> frozen_ops = {};
};

// One trainable tensor: its values and the gradient accumulated since the last step().
struct Parameter {
  std::string name;   // "op 3 '/net/ConvTranspose' phase (1,0) weights", ...
  std::vector<float>* values;
  std::vector<float>* gradient;
  int op = -1;           // the op it belongs to
  bool trainable = true;  // false for TrainerOptions::frozen_ops
};

// Bytes a Trainer holds (edgegan report --training).
struct TrainingMemory {
  int64_t activations = 0;           // every tensor of the forward pass, kept for backward
  int64_t activation_gradients = 0;  // one gradient per activation
  int64_t labels = 0;                // int64 inputs
  int64_t parameters = 0;            // the trainer's own copies of the weights
  int64_t parameter_gradients = 0;
  int64_t optimizer_state = 0;       // Adam: 2 per trainable weight, SGD with momentum: 1, frozen: 0
  int64_t scratch = 0;               // backward temporaries (planned: an upper bound)
  int64_t mapped_weights = 0;        // the model file's weights, memory-mapped
  int64_t total() const;
};

class Trainer {
 public:
  struct Impl;
  Trainer(std::shared_ptr<const Model> model, const TrainerOptions& options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Runs the model, keeping every activation for backward(). Inputs as for Session::run.
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs);
  // Back-propagates d(loss)/d(output) for every output (same order and shapes as
  // forward() returned), adding to the parameter gradients. Returns d(loss)/d(input)
  // for every float input (empty tensors for label inputs), e.g. to chain D into G.
  std::vector<Tensor> backward(const std::vector<Tensor>& output_gradients);
  // As backward(), for the parameter gradients only: the ops reading the model's inputs
  // skip their input-gradient kernels (e.g. D's passes on real and generated images,
  // whose image gradients nobody reads).
  void backward_parameters(const std::vector<Tensor>& output_gradients);
  // As backward(), for the input gradients only: parameter gradients are neither computed
  // nor changed (e.g. D's pass when training G through it).
  std::vector<Tensor> input_gradients(const std::vector<Tensor>& output_gradients);
  // Optimizer update from the accumulated gradients, then clears them.
  void step();
  void zero_grad();

  std::vector<Parameter> parameters();
  int64_t parameter_count() const;
  int64_t steps_taken() const;
  const Model& model() const;
  int batch() const;

  // Measured: the capacity of every buffer held now (after forward/backward/step it equals
  // training_memory(), scratch aside, which is planned as an upper bound).
  TrainingMemory memory() const;

  // Writes the model with the current weights to `path` (atomically; never over an input).
  void save(const std::string& path, const std::string& source_path = "") const;

 private:
  std::unique_ptr<Impl> impl_;
};

// Planned from the model alone, allocating no activation or weight copy.
TrainingMemory training_memory(const std::shared_ptr<const Model>& model, const TrainerOptions& options);

// ---- losses: the mean loss of `prediction` against `target` (same element count), and
// d(loss)/d(prediction) shaped like the prediction, ready for Trainer::backward. PyTorch's
// MSELoss, L1Loss and BCEWithLogitsLoss (reduction 'mean').
enum class Loss { kMse, kL1, kBceWithLogits };
double loss_and_gradient(Loss loss, const Tensor& prediction, const std::vector<float>& target, Tensor* gradient);

// ---- adversarial fine-tuning: one step of the DCGAN recipe (pytorch/examples), with
// BCE on the discriminator's logits and the non-saturating generator loss:
//   fake = G(noise, fake_labels)
//   D: zero_grad; BCE(D(real, real_labels), 1) + BCE(D(fake, fake_labels), 0); step
//   G: zero_grad; BCE(D'(fake, fake_labels), 1) through the updated D'; step (D's gradients discarded)
struct GanBatch {
  std::vector<float> real_images;        // storage layout (NHWC), batch x D's image input
  std::vector<int64_t> real_labels;      // conditional models: one per real image
  std::vector<float> noise;              // batch x G's noise size
  std::vector<int64_t> fake_labels;      // conditional models: one per generated image
};
struct GanLosses {
  double discriminator_real = 0, discriminator_fake = 0, generator = 0;
};
// The trainers must have the same batch; D's image input must take G's output shape, and D
// must give one logit per sample. Throws edgegan::Error naming the mismatch.
GanLosses gan_step(Trainer& generator, Trainer& discriminator, const GanBatch& batch);

}  // namespace edgegan

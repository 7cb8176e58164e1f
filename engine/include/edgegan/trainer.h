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

// Bytes a Trainer holds (edgegan report --training). The activations, their gradients,
// the labels and the kernels' scratch share one arena, planned like a Session's (a
// buffer is reused once nothing reads it any more); the first four fields are what each
// needs on its own, `arena` what they take together, allocated once.
struct TrainingMemory {
  int64_t activations = 0;           // every float tensor of the forward pass, kept for backward
  int64_t activation_gradients = 0;  // one gradient per float tensor
  int64_t labels = 0;                // int64 inputs
  int64_t scratch = 0;               // the kernels' forward and backward scratch
  int64_t arena = 0;                 // all four in one planned arena
  int64_t parameters = 0;            // the trainer's own copies of the weights
  int64_t parameter_gradients = 0;
  int64_t optimizer_state = 0;       // Adam: 2 per trainable weight, SGD with momentum: 1, frozen: 0
  int64_t weight_copies = 0;         // filters the kernels transform (Winograd, pixel lanes), redone after each step
  int64_t mapped_weights = 0;        // the model file's weights, memory-mapped
  int64_t total() const;             // arena + parameters + gradients + optimizer state + weight copies + mapped weights
};

class Trainer {
 public:
  struct Impl;
  Trainer(std::shared_ptr<const Model> model, const TrainerOptions& options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Runs the model, keeping every activation for backward(). Inputs as for Session::run.
  // It runs the same kernels on the same kind of plan as a Session (the Winograd form
  // and the pixel-lanes path where inference takes them), in an arena allocated once.
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs);
  // The same into `outputs`, whose tensors are reused: once they have the outputs'
  // shapes, a training loop over these *_into calls allocates nothing.
  void forward_into(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);
  // Back-propagates d(loss)/d(output) for every output (same order and shapes as
  // forward() returned), adding to the parameter gradients. Returns d(loss)/d(input)
  // for every float input (empty tensors for label inputs), e.g. to chain D into G.
  std::vector<Tensor> backward(const std::vector<Tensor>& output_gradients);
  void backward_into(const std::vector<Tensor>& output_gradients, std::vector<Tensor>& input_gradients);
  // As backward(), for the parameter gradients only: the ops reading the model's inputs
  // skip their input-gradient kernels (e.g. D's passes on real and generated images,
  // whose image gradients nobody reads).
  void backward_parameters(const std::vector<Tensor>& output_gradients);
  // As backward(), for the input gradients only: parameter gradients are neither computed
  // nor changed (e.g. D's pass when training G through it).
  std::vector<Tensor> input_gradients(const std::vector<Tensor>& output_gradients);
  void input_gradients_into(const std::vector<Tensor>& output_gradients, std::vector<Tensor>& input_gradients);
  // Optimizer update from the accumulated gradients, then clears them.
  void step();
  void zero_grad();

  // The trainable tensors. Their values may be edited in place (loading weights, a
  // hand-made update); call parameters_edited() afterwards, so kernels that keep
  // transformed copies of their weights (Winograd filters, packed heads) re-derive them.
  std::vector<Parameter> parameters();
  void parameters_edited();
  int64_t parameter_count() const;
  int64_t steps_taken() const;
  const Model& model() const;
  int batch() const;
  // The kernel each op's forward runs, in op order: the ones a Session at the same
  // batch and threads runs (e.g. "conv_transpose2d_split_winograd").
  std::vector<std::string> kernel_names() const;

  // Measured: the bytes of every buffer held now (the arena as allocated); equals training_memory().
  TrainingMemory memory() const;
  // Bytes allocated for the model since construction, counted at each allocation (the
  // arena and the kernels' weight copies); constant after construction.
  uint64_t measured_allocation_bytes() const;

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

// gan_step as an object that keeps its tensors between steps: after the first step,
// a step allocates nothing (what an on-device fine-tuning loop wants).
class GanStep {
 public:
  GanStep(Trainer& generator, Trainer& discriminator);  // checks the pair
  GanLosses run(const GanBatch& batch);

 private:
  Trainer& g_;
  Trainer& d_;
  std::vector<Tensor> g_inputs_, g_outputs_, d_inputs_, d_outputs_, d_gradient_, d_input_gradients_, g_gradient_, g_input_gradients_;
  std::vector<float> ones_, zeros_;
};

}  // namespace edgegan

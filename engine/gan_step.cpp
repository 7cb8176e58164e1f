// One adversarial training step over a generator and a discriminator Trainer
// (edgegan/trainer.h), in the order pytorch/examples' DCGAN uses, so a run can
// be compared step by step with PyTorch.
#include <algorithm>

#include "edgegan/trainer.h"

namespace edgegan {
namespace {

int64_t per_sample(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

// The model's inputs for one batch: the float input of `role` gets `values`, a label input gets `labels`.
std::vector<Tensor> bind(const Model& model, int batch, InputRole role, const std::vector<float>& values,
                         const std::vector<int64_t>& labels, const std::string& who) {
  std::vector<Tensor> inputs;
  for (const InputInfo& info : model.inputs()) {
    Tensor t{info.name, info.dtype, info.layout, info.dims, {}, {}};
    t.shape[0] = batch;
    if (info.role == InputRole::kLabel) {
      if (static_cast<int64_t>(labels.size()) != batch)
        throw Error("gan_step: the " + who + " is conditional; it needs " + std::to_string(batch) + " labels, got " +
                    std::to_string(labels.size()));
      t.i64 = labels;
    } else if (info.role == role) {
      t.f32 = values;  // size checked by the trainer against the input's shape
    } else {
      throw Error("gan_step: the " + who + "'s input '" + info.name + "' is neither " +
                  (role == InputRole::kNoise ? "noise" : "an image") + " nor a label");
    }
    inputs.push_back(std::move(t));
  }
  if (labels.size() && std::none_of(model.inputs().begin(), model.inputs().end(),
                                    [](const InputInfo& i) { return i.role == InputRole::kLabel; }))
    throw Error("gan_step: labels were given, but the " + who + " takes none");
  return inputs;
}

double bce_against(const Tensor& logits, float target, Tensor* gradient) {
  return loss_and_gradient(Loss::kBceWithLogits, logits, std::vector<float>(logits.f32.size(), target), gradient);
}

void check_pair(const Trainer& g, const Trainer& d) {
  if (g.batch() != d.batch())
    throw Error("gan_step: the generator trains with batch " + std::to_string(g.batch()) + ", the discriminator with " +
                std::to_string(d.batch()));
  const Model& gm = g.model();
  const Model& dm = d.model();
  if (gm.outputs().size() != 1) throw Error("gan_step: the generator must have one output");
  if (dm.outputs().size() != 1 || per_sample(dm.outputs()[0].dims) != 1)
    throw Error("gan_step: the discriminator must have one output holding one logit per sample");
  const InputInfo* image = nullptr;
  for (const InputInfo& in : dm.inputs())
    if (in.dtype == DType::kFloat32) image = &in;
  if (!image || image->dims != gm.outputs()[0].dims || image->layout != gm.outputs()[0].layout)
    throw Error("gan_step: the discriminator's image input does not take the generator's output");
}

}  // namespace

GanLosses gan_step(Trainer& generator, Trainer& discriminator, const GanBatch& data) {
  check_pair(generator, discriminator);
  const int batch = generator.batch();
  const Model& dm = discriminator.model();
  const InputRole d_role = std::any_of(dm.inputs().begin(), dm.inputs().end(), [](const InputInfo& i) { return i.role == InputRole::kImage; })
                               ? InputRole::kImage
                               : InputRole::kOther;
  GanLosses losses;
  Tensor d_loss_grad;

  const std::vector<float> fake = generator.forward(bind(generator.model(), batch, InputRole::kNoise, data.noise, data.fake_labels, "generator"))
                                      .front()
                                      .f32;
  // Discriminator: real images towards 1, generated ones (no gradient into G) towards 0.
  discriminator.zero_grad();
  losses.discriminator_real =
      bce_against(discriminator.forward(bind(dm, batch, d_role, data.real_images, data.real_labels, "discriminator")).front(), 1.f, &d_loss_grad);
  discriminator.backward({d_loss_grad});
  losses.discriminator_fake =
      bce_against(discriminator.forward(bind(dm, batch, d_role, fake, data.fake_labels, "discriminator")).front(), 0.f, &d_loss_grad);
  discriminator.backward({d_loss_grad});
  discriminator.step();

  // Generator: the updated discriminator should call the same images real.
  generator.zero_grad();
  losses.generator =
      bce_against(discriminator.forward(bind(dm, batch, d_role, fake, data.fake_labels, "discriminator")).front(), 1.f, &d_loss_grad);
  std::vector<Tensor> d_inputs = discriminator.backward({d_loss_grad});
  discriminator.zero_grad();  // this pass only carries the gradient back to G
  for (size_t i = 0; i < dm.inputs().size(); ++i)
    if (dm.inputs()[i].dtype == DType::kFloat32) generator.backward({std::move(d_inputs[i])});
  generator.step();
  return losses;
}

}  // namespace edgegan

// One adversarial training step over a generator and a discriminator Trainer
// (edgegan/trainer.h), in the order pytorch/examples' DCGAN uses, so a run can
// be compared step by step with PyTorch.

#include "edgegan/trainer.h"

namespace edgegan {
namespace {

int64_t per_sample(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

// batch_inputs() with the failing model named.
std::vector<Tensor> inputs_of(const Trainer& t, const std::vector<float>& values, const std::vector<int64_t>& labels, const char* who) try {
  return batch_inputs(t.model(), t.batch(), values, labels);
} catch (const Error& e) {
  throw Error(std::string("gan_step: the ") + who + ": " + e.what());
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
  GanLosses losses;
  Tensor d_loss_grad;

  const std::vector<float> fake = generator.forward(inputs_of(generator, data.noise, data.fake_labels, "generator")).front().f32;
  // Discriminator: real images towards 1, generated ones (no gradient into G) towards 0.
  discriminator.zero_grad();
  losses.discriminator_real =
      bce_against(discriminator.forward(inputs_of(discriminator, data.real_images, data.real_labels, "discriminator")).front(), 1.f, &d_loss_grad);
  discriminator.backward_parameters({d_loss_grad});
  losses.discriminator_fake =
      bce_against(discriminator.forward(inputs_of(discriminator, fake, data.fake_labels, "discriminator")).front(), 0.f, &d_loss_grad);
  discriminator.backward_parameters({d_loss_grad});
  discriminator.step();

  // Generator: the updated discriminator should call the same images real. D's pass only
  // carries the gradient back to G, so its own parameter gradients are not computed.
  generator.zero_grad();
  losses.generator =
      bce_against(discriminator.forward(inputs_of(discriminator, fake, data.fake_labels, "discriminator")).front(), 1.f, &d_loss_grad);
  std::vector<Tensor> d_inputs = discriminator.input_gradients({d_loss_grad});
  const std::vector<InputInfo>& d_info = discriminator.model().inputs();
  for (size_t i = 0; i < d_info.size(); ++i)
    if (d_info[i].dtype == DType::kFloat32) generator.backward({std::move(d_inputs[i])});
  generator.step();
  return losses;
}

}  // namespace edgegan

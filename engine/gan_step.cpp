// One adversarial training step over a generator and a discriminator Trainer
// (edgegan/trainer.h), in the order pytorch/examples' DCGAN uses, so a run can
// be compared step by step with PyTorch.

#include "edgegan/trainer.h"

#include <algorithm>

namespace edgegan {
namespace {

int64_t per_sample(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

// batch_inputs() into `inputs` (reused), with the failing model named.
void inputs_of(const Trainer& t, const std::vector<float>& values, const std::vector<int64_t>& labels, const char* who,
               std::vector<Tensor>& inputs) try {
  const Model& m = t.model();
  const bool shaped = inputs.size() == m.inputs().size();
  if (!shaped) {
    inputs = batch_inputs(m, t.batch(), values, labels);
    return;
  }
  // Same model, same batch: only the values change; batch_inputs' checks ran on the first call.
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor& in = inputs[i];
    if (in.dtype == DType::kInt64) {
      if (labels.size() != in.i64.size()) throw Error("expected " + std::to_string(in.i64.size()) + " labels, got " + std::to_string(labels.size()));
      std::copy(labels.begin(), labels.end(), in.i64.begin());
    } else {
      if (values.size() != in.f32.size()) throw Error("expected " + std::to_string(in.f32.size()) + " values, got " + std::to_string(values.size()));
      std::copy(values.begin(), values.end(), in.f32.begin());
    }
  }
} catch (const Error& e) {
  throw Error(std::string("gan_step: the ") + who + ": " + e.what());
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

GanLosses gan_step(Trainer& generator, Trainer& discriminator, const GanBatch& data) { return GanStep(generator, discriminator).run(data); }

GanStep::GanStep(Trainer& generator, Trainer& discriminator) : g_(generator), d_(discriminator) {
  check_pair(g_, d_);
  const size_t logits = static_cast<size_t>(d_.batch());  // one per sample (check_pair)
  ones_.assign(logits, 1.f);
  zeros_.assign(logits, 0.f);
}

GanLosses GanStep::run(const GanBatch& data) {
  GanLosses losses;
  d_gradient_.resize(1);
  g_gradient_.resize(1);
  inputs_of(g_, data.noise, data.fake_labels, "generator", g_inputs_);
  g_.forward_into(g_inputs_, g_outputs_);
  const std::vector<float>& fake = g_outputs_.front().f32;
  // Discriminator: real images towards 1, generated ones (no gradient into G) towards 0.
  d_.zero_grad();
  inputs_of(d_, data.real_images, data.real_labels, "discriminator", d_inputs_);
  d_.forward_into(d_inputs_, d_outputs_);
  losses.discriminator_real = loss_and_gradient(Loss::kBceWithLogits, d_outputs_.front(), ones_, &d_gradient_[0]);
  d_.backward_parameters(d_gradient_);
  inputs_of(d_, fake, data.fake_labels, "discriminator", d_inputs_);
  d_.forward_into(d_inputs_, d_outputs_);
  losses.discriminator_fake = loss_and_gradient(Loss::kBceWithLogits, d_outputs_.front(), zeros_, &d_gradient_[0]);
  d_.backward_parameters(d_gradient_);
  d_.step();

  // Generator: the updated discriminator should call the same images real. D's pass only
  // carries the gradient back to G, so its own parameter gradients are not computed.
  g_.zero_grad();
  d_.forward_into(d_inputs_, d_outputs_);  // d_inputs_ still hold the generated images
  losses.generator = loss_and_gradient(Loss::kBceWithLogits, d_outputs_.front(), ones_, &d_gradient_[0]);
  d_.input_gradients_into(d_gradient_, d_input_gradients_);
  const std::vector<InputInfo>& d_info = d_.model().inputs();
  for (size_t i = 0; i < d_info.size(); ++i)
    if (d_info[i].dtype == DType::kFloat32) {
      std::swap(g_gradient_[0], d_input_gradients_[i]);
      g_.backward_into(g_gradient_, g_input_gradients_);
      std::swap(g_gradient_[0], d_input_gradients_[i]);
    }
  g_.step();
  return losses;
}

}  // namespace edgegan

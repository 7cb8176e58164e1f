// Trainer (forward, backward, optimizer steps, save) and finetune(), the loop of
// `edgegan finetune` with a progress callback.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "arrays.h"
#include "bindings.h"
#include "edgegan/finetune.h"

namespace edgegan_python {
namespace {

// Runs `work` holding the trainer's lock, with the GIL released first: a thread that
// holds the lock may need the GIL (finetune's progress callback), so the GIL is never
// held while waiting for the lock.
template <typename Work>
auto locked(PyTrainer& t, Work&& work) {
  nb::gil_scoped_release unlocked;
  std::lock_guard lock(t.busy);
  return work(*t.trainer);
}

edgegan::TrainerOptions trainer_options(int batch, int threads, const std::string& optimizer, float lr, float momentum, float beta1,
                                        float beta2, float eps, float weight_decay, const std::vector<int>& freeze) {
  if (batch < 1) throw nb::value_error(("batch must be at least 1, got " + std::to_string(batch)).c_str());
  if (threads < 0) throw nb::value_error(("threads must be 0 (all cores) or more, got " + std::to_string(threads)).c_str());
  if (!(lr > 0.f)) throw nb::value_error("lr must be positive");
  edgegan::TrainerOptions o;
  o.batch = batch;
  o.threads = threads;
  if (optimizer == "sgd") o.optimizer = edgegan::Optimizer::kSgd;
  else if (optimizer != "adam") throw nb::value_error(("optimizer must be 'adam' or 'sgd', got '" + optimizer + "'").c_str());
  o.learning_rate = lr;
  o.momentum = momentum;
  o.beta1 = beta1;
  o.beta2 = beta2;
  o.eps = eps;
  o.weight_decay = weight_decay;
  o.frozen_ops = freeze;
  return o;
}

std::vector<TensorSpec> input_specs(const edgegan::Model& m) {
  std::vector<TensorSpec> specs;
  for (const auto& in : m.inputs()) specs.push_back(spec_of(in));
  return specs;
}

std::vector<TensorSpec> output_specs(const edgegan::Model& m) {
  std::vector<TensorSpec> specs;
  for (const auto& out : m.outputs()) specs.push_back(spec_of(out));
  return specs;
}

nb::dict forward(PyTrainer& t, const nb::dict& inputs, const std::string& layout_name) {
  const ArrayLayout layout = parse_layout(layout_name);
  const std::vector<edgegan::Tensor> tensors = to_tensors(inputs, input_specs(*t.model), t.trainer->batch(), layout, "input");
  std::vector<edgegan::Tensor> outputs = locked(t, [&](edgegan::Trainer& trainer) { return trainer.forward(tensors); });
  nb::dict result;
  for (size_t i = 0; i < outputs.size(); ++i) result[t.model->outputs()[i].name.c_str()] = to_numpy(std::move(outputs[i]), layout);
  return result;
}

nb::dict backward(PyTrainer& t, const nb::dict& gradients, const std::string& layout_name) {
  const ArrayLayout layout = parse_layout(layout_name);
  const std::vector<edgegan::Tensor> tensors = to_tensors(gradients, output_specs(*t.model), t.trainer->batch(), layout, "output gradient");
  std::vector<edgegan::Tensor> input_gradients = locked(t, [&](edgegan::Trainer& trainer) { return trainer.backward(tensors); });
  nb::dict result;  // float inputs only: labels have no gradient
  for (size_t i = 0; i < input_gradients.size(); ++i) {
    const edgegan::InputInfo& in = t.model->inputs()[i];
    if (in.dtype == edgegan::DType::kFloat32) result[in.name.c_str()] = to_numpy(std::move(input_gradients[i]), layout);
  }
  return result;
}

nb::dict memory_dict(const edgegan::TrainingMemory& m) {
  nb::dict d;
  d["activations"] = m.activations;
  d["activation_gradients"] = m.activation_gradients;
  d["labels"] = m.labels;
  d["scratch"] = m.scratch;
  d["arena"] = m.arena;
  d["parameters"] = m.parameters;
  d["parameter_gradients"] = m.parameter_gradients;
  d["optimizer_state"] = m.optimizer_state;
  d["weight_copies"] = m.weight_copies;
  d["mapped_weights"] = m.mapped_weights;
  d["total"] = m.total();
  return d;
}

nb::list parameters(PyTrainer& t) {
  struct Copy {
    edgegan::Parameter info;
    edgegan::Tensor values, gradient;
  };
  // Copied under the lock, so no other thread steps meanwhile; made Python objects after.
  std::vector<Copy> copies = locked(t, [](edgegan::Trainer& trainer) {
    std::vector<Copy> out;
    for (const edgegan::Parameter& p : trainer.parameters()) {
      Copy c{p, {}, {}};
      c.values.shape = {static_cast<int64_t>(p.values->size())};
      c.values.f32 = *p.values;
      c.gradient.shape = {static_cast<int64_t>(p.gradient->size())};
      c.gradient.f32 = *p.gradient;
      out.push_back(std::move(c));
    }
    return out;
  });
  nb::list list;
  for (Copy& c : copies) {
    nb::dict d;
    d["name"] = c.info.name;
    d["op"] = c.info.op;
    d["trainable"] = c.info.trainable;
    d["values"] = to_numpy(std::move(c.values), ArrayLayout::kNhwc);
    d["gradient"] = to_numpy(std::move(c.gradient), ArrayLayout::kNhwc);
    list.append(d);
  }
  return list;
}

// finetune(): the images and labels checked and converted here (ValueError), the loop
// run by edgegan::finetune with the GIL released, re-taken only to call `progress`.
nb::dict finetune(PyTrainer& g, nb::handle images, nb::handle labels, PyTrainer* d, nb::handle targets, int64_t steps, const std::string& loss,
                  uint64_t seed, const std::string& layout_name, nb::handle progress) {
  const ArrayLayout layout = parse_layout(layout_name);
  if (d == &g) throw nb::value_error("finetune: the discriminator must be another Trainer than the generator");
  if (steps < 1) throw nb::value_error(("finetune: steps must be at least 1, got " + std::to_string(steps)).c_str());
  edgegan::FinetuneOptions options;
  options.steps = steps;
  options.seed = seed;
  if (loss == "l1") options.loss = edgegan::Loss::kL1;
  else if (loss != "mse") throw nb::value_error(("finetune: loss must be 'mse' or 'l1', got '" + loss + "'").c_str());
  if (!progress.is_none() && !PyCallable_Check(progress.ptr())) throw nb::type_error("finetune: progress must be callable or None");

  const edgegan::Model& model = *g.model;
  const bool paired = !targets.is_none();
  if (paired) {
    if (d) throw nb::value_error("finetune: targets and a discriminator do not go together: paired fine-tuning uses loss 'mse' or 'l1'");
    if (!labels.is_none()) throw nb::value_error("finetune: targets and labels do not go together: paired fine-tuning takes no labels");
    if (model.inputs().size() != 1 || model.inputs().front().dtype != edgegan::DType::kFloat32 || model.outputs().size() != 1)
      throw nb::value_error("finetune: paired fine-tuning needs a model with one float input and one output");
  } else if (model.noise_size() == 0 || model.outputs().size() != 1) {
    throw nb::value_error("finetune: the generator must have a noise input and one output (give targets to tune an image-to-image model)");
  }
  const AnyArray data = as_array(images, "'images'");
  if (data.ndim() == 0 || data.shape(0) < 1) throw nb::value_error("finetune: 'images' must hold at least one image");
  const int64_t count = static_cast<int64_t>(data.shape(0));
  // Paired: `images` are the model's inputs and `targets` its wanted outputs.
  TensorSpec image_spec = paired ? spec_of(model.inputs().front()) : spec_of(model.outputs().front());
  image_spec.name = "images";
  const edgegan::Tensor image_tensor = to_tensor(data, image_spec, count, layout);
  edgegan::Tensor target_tensor;
  if (paired) {
    TensorSpec target_spec = spec_of(model.outputs().front());
    target_spec.name = "targets";
    const AnyArray wanted = as_array(targets, "'targets'");
    if (wanted.ndim() == 0 || static_cast<int64_t>(wanted.shape(0)) != count)
      throw nb::value_error(("finetune: give one target per image (" + std::to_string(count) + ")").c_str());
    target_tensor = to_tensor(wanted, target_spec, count, layout);
  }
  std::vector<int64_t> classes;
  if (model.label_count() > 0) {
    if (labels.is_none()) throw nb::value_error("finetune: the generator is conditional: give labels, one per image");
    const edgegan::Tensor t = to_flat_tensor(as_array(labels, "'labels'"), "labels", edgegan::DType::kInt64);
    if (t.shape != std::vector<int64_t>{count})
      throw nb::value_error(("finetune: 'labels' has shape " + shape_text(t.shape) + ", give one per image: " + shape_text({count})).c_str());
    classes = t.i64;
  } else if (!labels.is_none()) {
    throw nb::value_error("finetune: labels given, but the generator is not conditional");
  }

  // Called on the training thread without the GIL: takes it, checks for Ctrl-C, calls
  // `progress`. An exception there stops the run and is raised once the loop returned.
  std::optional<nb::python_error> failure;
  auto on_step = [&](const edgegan::FinetuneProgress& p) {
    nb::gil_scoped_acquire with_gil;
    try {
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      if (progress.is_none()) return true;
      nb::dict info;
      info["step"] = p.step;
      info["steps"] = p.steps;
      info["generator_loss"] = p.generator_loss;
      info["discriminator_loss"] = d ? nb::object(nb::float_(p.discriminator_loss)) : nb::none();
      info["seconds"] = p.seconds;
      nb::object answer = progress(info);
      return !(answer.is(nb::bool_(false)));  // only False stops; None (no return) goes on
    } catch (nb::python_error& e) {
      failure.emplace(std::move(e));
      return false;
    }
  };
  edgegan::FinetuneResult result;
  {
    nb::gil_scoped_release unlocked;
    std::unique_lock g_lock(g.busy, std::defer_lock);
    if (paired) {
      g_lock.lock();
      result = edgegan::finetune_paired(*g.trainer, image_tensor, target_tensor, options, on_step);
    } else if (d) {
      std::unique_lock d_lock(d->busy, std::defer_lock);
      std::lock(g_lock, d_lock);
      result = edgegan::finetune(*g.trainer, d->trainer.get(), image_tensor, classes, options, on_step);
    } else {
      g_lock.lock();
      result = edgegan::finetune(*g.trainer, nullptr, image_tensor, classes, options, on_step);
    }
  }
  if (failure) throw std::move(*failure);
  nb::dict out;
  out["steps"] = result.steps;
  out["generator_losses"] = result.generator_losses;
  out["discriminator_losses"] = result.discriminator_losses;
  out["seconds"] = result.seconds;
  return out;
}

}  // namespace

void bind_trainer(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<PyTrainer>(m, "Trainer",
                        "Fine-tunes a model: forward keeping activations, backward through every op, SGD or Adam with "
                        "torch.optim semantics, and save() to a new .egan. BatchNorm stays folded (eval-mode training).")
      .def(
          "__init__",
          [](PyTrainer* self, const PyModel& model, int batch, int threads, const std::string& optimizer, float lr, float momentum, float beta1,
             float beta2, float eps, float weight_decay, const std::vector<int>& freeze) {
            const edgegan::TrainerOptions options = trainer_options(batch, threads, optimizer, lr, momentum, beta1, beta2, eps, weight_decay, freeze);
            std::unique_ptr<edgegan::Trainer> trainer;
            {
              nb::gil_scoped_release unlocked;
              trainer = std::make_unique<edgegan::Trainer>(model.model, options);
            }
            new (self) PyTrainer(model.model, std::move(trainer));
          },
          "model"_a, nb::kw_only(), "batch"_a = 1, "threads"_a = 0, "optimizer"_a = "adam", "lr"_a = 2e-4f, "momentum"_a = 0.f,
          "beta1"_a = 0.5f, "beta2"_a = 0.999f, "eps"_a = 1e-8f, "weight_decay"_a = 0.f, "freeze"_a = std::vector<int>{},
          "optimizer: 'adam' or 'sgd' (with momentum). freeze: op indices (Model.ops order) whose weights stay fixed; "
          "gradients still flow through them.")
      .def("forward", &forward, "inputs"_a, nb::kw_only(), "layout"_a = "nchw",
           "Runs the model on {input name: array}, keeping the activations for backward(); returns {output name: array}.")
      .def("backward", &backward, "output_gradients"_a, nb::kw_only(), "layout"_a = "nchw",
           "Back-propagates d(loss)/d(output) for every output (shaped as forward() returned them), adding to the parameter "
           "gradients; returns {input name: d(loss)/d(input)} for the float inputs.")
      .def(
          "step", [](PyTrainer& t) { locked(t, [](edgegan::Trainer& trainer) { trainer.step(); }); },
          "One optimizer update from the accumulated gradients, which are then cleared.")
      .def(
          "zero_grad", [](PyTrainer& t) { locked(t, [](edgegan::Trainer& trainer) { trainer.zero_grad(); }); },
          "Clears the accumulated gradients.")
      .def(
          "save",
          [](PyTrainer& t, const std::filesystem::path& path, std::optional<std::filesystem::path> source) {
            locked(t, [&](edgegan::Trainer& trainer) { trainer.save(path.string(), source ? source->string() : ""); });
          },
          "path"_a, "source_path"_a = nb::none(),
          "Writes the model with the current weights to a new .egan, atomically; never over `source_path` (the model it "
          "was loaded from, if given).")
      .def(
          "memory",
          [](PyTrainer& t) { return memory_dict(locked(t, [](edgegan::Trainer& trainer) { return trainer.memory(); })); },
          "Bytes held now, by kind, as a dict (the rows of `edgegan report --training`).")
      .def("parameters", &parameters,
           "One dict per trainable tensor: name, op, trainable, values and gradient (copies, float32, flat).")
      .def_prop_ro("batch", [](PyTrainer& t) { return t.trainer->batch(); })
      .def_prop_ro("parameter_count", [](PyTrainer& t) { return t.trainer->parameter_count(); })
      .def_prop_ro("steps_taken", [](PyTrainer& t) { return locked(t, [](edgegan::Trainer& trainer) { return trainer.steps_taken(); }); })
      .def_prop_ro("kernel_names", [](PyTrainer& t) { return t.trainer->kernel_names(); })
      .def_prop_ro("model", [](PyTrainer& t) { return PyModel{t.model}; })
      .def("__repr__", [](PyTrainer& t) {
        return "<edgegan.Trainer batch " + std::to_string(t.trainer->batch()) + ", " + std::to_string(t.trainer->parameter_count()) +
               " parameters>";
      });

  m.def("finetune", &finetune, "generator"_a, "images"_a.none(), "labels"_a.none() = nb::none(), nb::kw_only(), "discriminator"_a.none() = nb::none(),
        "targets"_a.none() = nb::none(), "steps"_a = 200, "loss"_a = "mse", "seed"_a = 0, "layout"_a = "nchw", "progress"_a.none() = nb::none(),
        "Fine-tunes the generator Trainer on `images` (float32, N samples of its output, NCHW unless layout='nhwc', in "
        "the output's value range), as `edgegan finetune` does: with a discriminator Trainer, adversarial steps of the "
        "DCGAN recipe (D tuned too); without, each image keeps one noise vector and G learns to redraw it (loss 'mse' "
        "or 'l1'). Conditional generators take one integer label per image. With `targets` (image-to-image and "
        "super-resolution models), `images` are the model's inputs and `targets` the outputs wanted for them: paired "
        "steps on loss 'mse' or 'l1', as `edgegan finetune --targets`. After each step `progress` (if given) is "
        "called with a dict (step, steps, generator_loss, discriminator_loss, seconds; losses are means of the last 10 "
        "steps); returning False stops the run. Returns the loss history as a dict. The tuned weights stay in the "
        "trainers: save them with Trainer.save().");
}

}  // namespace edgegan_python

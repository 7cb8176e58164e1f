#include "cli/finetune.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <numeric>

#include "cli/progress_bar.h"
#include "cli/model_loading.h"
#include "edgegan/edgegan.h"
#include "edgegan/finetune.h"
#include "edgegan/io.h"
#include "edgegan/trainer.h"

namespace edgegan_cli {
namespace {

using edgegan::Error;

std::string shape_text(const std::vector<int64_t>& d, size_t from) {
  std::string s;
  for (size_t i = from; i < d.size(); ++i) s += (i > from ? "x" : "") + std::to_string(d[i]);
  return s;
}

// The training images, shaped as the generator makes them and moved to its storage layout
// (edgegan::finetune checks their values).
edgegan::Tensor load_images(const FinetuneArgs& a, const edgegan::Model& g) {
  const edgegan::OutputInfo& out = g.outputs().front();
  edgegan::Tensor data = edgegan::read_npy(a.data);
  if (data.dtype != edgegan::DType::kFloat32) throw Error("--data '" + a.data + "' holds integers; images must be float32");
  const bool nhwc = out.layout == edgegan::Layout::kNHWC;
  // What the .npy must hold after the batch dim: NCHW for image generators (as PyTorch saves them).
  std::vector<int64_t> want(out.dims.begin(), out.dims.end());
  if (nhwc) want = {-1, out.dims[3], out.dims[1], out.dims[2]};
  if (data.shape.size() != want.size() || !std::equal(want.begin() + 1, want.end(), data.shape.begin() + 1) || data.shape[0] < 1)
    throw Error("--data '" + a.data + "' holds an array of " + shape_text(data.shape, 0) + ", but the generator makes " +
                shape_text(want, 1) + (nhwc ? " images (give N x " + shape_text(want, 1) + ", NCHW)" : " values per sample"));
  return nhwc ? edgegan::to_nhwc(data) : data;
}

std::vector<int64_t> load_labels(const FinetuneArgs& a, const edgegan::Model& g, int64_t images) {
  int64_t classes = 0;
  for (const auto& in : g.inputs())
    if (in.role == edgegan::InputRole::kLabel) classes = in.label_count;
  if (classes == 0) {
    if (!a.labels.empty()) throw Error("--labels given, but the generator is not conditional");
    return {};
  }
  if (a.labels.empty())
    throw Error("the generator is conditional (" + std::to_string(classes) + " classes): give --labels FILE.npy with one int64 label per image");
  const edgegan::Tensor t = edgegan::read_npy(a.labels);
  if (t.dtype != edgegan::DType::kInt64 || t.shape.size() != 1 || t.shape[0] != images)
    throw Error("--labels '" + a.labels + "' must hold " + std::to_string(images) + " int64 labels (one per image), shape (" +
                std::to_string(images) + ",)");
  return t.i64;
}

// Mean of the first and of the last tenth (at least one step) of a loss history.
std::pair<double, double> first_and_last(const std::vector<double>& history) {
  const size_t n = std::max<size_t>(1, history.size() / 10);
  auto mean = [&](size_t from) { return std::accumulate(history.begin() + static_cast<long>(from), history.begin() + static_cast<long>(from + n), 0.0) / static_cast<double>(n); };
  return {mean(0), mean(history.size() - n)};
}

std::string fixed(double v, int digits = 3) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

// A .npy of whole samples in ONNX layout (NCHW for maps), moved to the storage layout `dims`/`layout` describe.
edgegan::Tensor load_samples(const std::string& flag, const std::string& path, const std::vector<int64_t>& dims, edgegan::Layout layout,
                             const std::string& what) {
  edgegan::Tensor data = edgegan::read_npy(path);
  if (data.dtype != edgegan::DType::kFloat32) throw Error(flag + " '" + path + "' holds integers; " + what + " must be float32");
  const bool nhwc = layout == edgegan::Layout::kNHWC;
  std::vector<int64_t> want(dims.begin(), dims.end());
  if (nhwc) want = {-1, dims[3], dims[1], dims[2]};
  if (data.shape.size() != want.size() || !std::equal(want.begin() + 1, want.end(), data.shape.begin() + 1) || data.shape[0] < 1)
    throw Error(flag + " '" + path + "' holds an array of " + shape_text(data.shape, 0) + ", but the model's " + what + " are " +
                shape_text(want, 1) + (nhwc ? " (give N x " + shape_text(want, 1) + ", NCHW)" : " values per sample"));
  return nhwc ? edgegan::to_nhwc(data) : data;
}

// Paired fine-tuning: --data inputs, --targets outputs.
int finetune_pairs(const FinetuneArgs& a) {
  if (!a.discriminator.empty()) throw Error("--targets and --discriminator do not go together: paired fine-tuning uses --loss mse|l1");
  if (!a.labels.empty()) throw Error("--targets and --labels do not go together: paired fine-tuning takes no labels");
  edgegan::ensure_not_an_input(a.output, {a.generator, a.data, a.targets});
  auto model = edgegan_cli::load_model(a.generator);
  if (model->inputs().size() != 1 || model->outputs().size() != 1)
    throw Error("'" + a.generator + "' has " + std::to_string(model->inputs().size()) + " inputs and " + std::to_string(model->outputs().size()) +
                " outputs; paired fine-tuning needs one of each");
  const edgegan::InputInfo& in = model->inputs().front();
  const edgegan::OutputInfo& out = model->outputs().front();
  const edgegan::Tensor inputs = load_samples("--data", a.data, in.dims, in.layout, "inputs");
  const edgegan::Tensor targets = load_samples("--targets", a.targets, out.dims, out.layout, "outputs");

  edgegan::TrainerOptions options;
  options.batch = a.batch;
  options.threads = a.threads;
  options.optimizer = a.optimizer == "sgd" ? edgegan::Optimizer::kSgd : edgegan::Optimizer::kAdam;
  options.learning_rate = a.learning_rate;
  options.momentum = a.momentum;
  options.beta1 = a.beta1;
  options.beta2 = a.beta2;
  options.frozen_ops = a.frozen_generator_ops;
  edgegan::Trainer trainer(model, options);
  edgegan::FinetuneOptions run;
  run.steps = a.steps;
  run.loss = a.loss == "l1" ? edgegan::Loss::kL1 : edgegan::Loss::kMse;
  run.seed = a.seed;
  ProgressBar bar(std::cerr, a.steps, ::isatty(2) != 0);
  const edgegan::FinetuneResult result = edgegan::finetune_paired(trainer, inputs, targets, run, [&](const edgegan::FinetuneProgress& p) {
    if (!a.quiet) bar.update(p.step, a.loss + " " + fixed(p.generator_loss, 4));
    return true;
  });
  if (!a.quiet) bar.finish();
  const double seconds = bar.elapsed_seconds();
  trainer.save(a.output, a.generator);
  const auto [first, last] = first_and_last(result.generator_losses);
  std::cout << "fine-tuned '" << a.generator << "' on " << inputs.shape[0] << " pairs for " << a.steps << " steps (batch " << a.batch << ", "
            << a.optimizer << " lr " << a.learning_rate << ", " << a.loss << ") in " << format_duration(seconds) << "\n";
  std::cout << "  " << a.loss << " loss " << fixed(first, 4) << " -> " << fixed(last, 4)
            << " (means of the first and last tenth of the steps)\n";
  std::cout << "wrote " << a.output << "\n";
  return 0;
}

}  // namespace

int finetune(const FinetuneArgs& a) {
  if (!a.targets.empty()) return finetune_pairs(a);
  // Every output is checked against every input before any work is done.
  std::vector<std::string> inputs = {a.generator, a.data};
  if (!a.discriminator.empty()) inputs.push_back(a.discriminator);
  if (!a.labels.empty()) inputs.push_back(a.labels);
  edgegan::ensure_not_an_input(a.output, inputs);
  if (!a.discriminator_output.empty()) {
    if (a.discriminator.empty()) throw Error("--discriminator-output needs --discriminator");
    edgegan::ensure_not_an_input(a.discriminator_output, inputs);
    if (std::filesystem::weakly_canonical(a.discriminator_output) == std::filesystem::weakly_canonical(a.output))
      throw Error("--discriminator-output and --output name the same file '" + a.output + "'");
  }

  auto g_model = edgegan_cli::load_model(a.generator);
  if (g_model->noise_size() == 0) throw Error("'" + a.generator + "' has no noise input; it is not a generator");
  if (g_model->outputs().size() != 1) throw Error("'" + a.generator + "' has " + std::to_string(g_model->outputs().size()) + " outputs; fine-tuning needs one image output");
  const edgegan::Tensor images = load_images(a, *g_model);
  const std::vector<int64_t> labels = load_labels(a, *g_model, images.shape[0]);

  edgegan::TrainerOptions options;
  options.batch = a.batch;
  options.threads = a.threads;
  options.optimizer = a.optimizer == "sgd" ? edgegan::Optimizer::kSgd : edgegan::Optimizer::kAdam;
  options.learning_rate = a.learning_rate;
  options.momentum = a.momentum;
  options.beta1 = a.beta1;
  options.beta2 = a.beta2;
  edgegan::TrainerOptions g_options = options;
  g_options.frozen_ops = a.frozen_generator_ops;
  edgegan::Trainer g(g_model, g_options);
  std::unique_ptr<edgegan::Trainer> d;
  if (!a.discriminator.empty()) {
    if (a.discriminator_learning_rate > 0.f) options.learning_rate = a.discriminator_learning_rate;
    d = std::make_unique<edgegan::Trainer>(edgegan_cli::load_model(a.discriminator), options);
  } else if (a.discriminator_learning_rate > 0.f) {
    throw Error("--d-lr needs --discriminator");
  }

  edgegan::FinetuneOptions run;
  run.steps = a.steps;
  run.loss = a.loss == "l1" ? edgegan::Loss::kL1 : edgegan::Loss::kMse;
  run.seed = a.seed;
  ProgressBar bar(std::cerr, a.steps, ::isatty(2) != 0);
  auto show = [&](const edgegan::FinetuneProgress& p) {
    if (!a.quiet)
      bar.update(p.step, d ? "D " + fixed(p.discriminator_loss) + "  G " + fixed(p.generator_loss) : a.loss + " " + fixed(p.generator_loss, 4));
    return true;
  };
  const edgegan::FinetuneResult result = edgegan::finetune(g, d.get(), images, labels, run, show);
  if (!a.quiet) bar.finish();
  const double seconds = bar.elapsed_seconds();
  const std::vector<double>& g_history = result.generator_losses;
  const std::vector<double>& d_history = result.discriminator_losses;

  g.save(a.output, a.generator);
  if (d && !a.discriminator_output.empty()) d->save(a.discriminator_output, a.discriminator);

  std::cout << "fine-tuned '" << a.generator << "' for " << a.steps << " steps (batch " << a.batch << ", " << a.optimizer << " lr "
            << a.learning_rate << ", " << (d ? "adversarial" : a.loss + " reconstruction") << ") in " << format_duration(seconds) << ", "
            << fixed(static_cast<double>(a.steps) / std::max(seconds, 1e-9), 1) << " steps/s\n";
  const auto [g_first, g_last] = first_and_last(g_history);
  if (d) {
    const auto [d_first, d_last] = first_and_last(d_history);
    std::cout << "  D loss " << fixed(d_first) << " -> " << fixed(d_last) << ", G loss " << fixed(g_first) << " -> " << fixed(g_last)
              << " (means of the first and last tenth of the steps)\n";
  } else {
    std::cout << "  " << a.loss << " loss " << fixed(g_first, 4) << " -> " << fixed(g_last, 4) << " (means of the first and last tenth of the steps)\n";
  }
  std::cout << "wrote " << a.output << "\n";
  if (d && !a.discriminator_output.empty()) std::cout << "wrote " << a.discriminator_output << "\n";
  return 0;
}

}  // namespace edgegan_cli

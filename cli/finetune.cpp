#include "cli/finetune.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>

#include "cli/progress_bar.h"
#include "cli/model_loading.h"
#include "edgegan/edgegan.h"
#include "edgegan/io.h"
#include "edgegan/trainer.h"

namespace edgegan_cli {
namespace {

using edgegan::Error;

bool takes_labels(const edgegan::Model& m) {
  return std::any_of(m.inputs().begin(), m.inputs().end(), [](const edgegan::InputInfo& i) { return i.role == edgegan::InputRole::kLabel; });
}

std::string shape_text(const std::vector<int64_t>& d, size_t from) {
  std::string s;
  for (size_t i = from; i < d.size(); ++i) s += (i > from ? "x" : "") + std::to_string(d[i]);
  return s;
}

// The training images, checked against what the generator makes and moved to its storage layout.
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
  float lo = INFINITY, hi = -INFINITY;
  for (float v : data.f32) {
    if (!std::isfinite(v)) throw Error("--data '" + a.data + "' holds a NaN or infinite value");
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isnan(out.value_min)) {
    const float slack = 0.01f * (out.value_max - out.value_min);
    if (lo < out.value_min - slack || hi > out.value_max + slack) {
      std::ostringstream os;
      os << "--data '" << a.data << "' values span [" << lo << ", " << hi << "], but the generator's output lies in [" << out.value_min
         << ", " << out.value_max << "]; rescale the images to that range";
      throw Error(os.str());
    }
  }
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
  for (size_t i = 0; i < t.i64.size(); ++i)
    if (t.i64[i] < 0 || t.i64[i] >= classes)
      throw Error("--labels '" + a.labels + "': label " + std::to_string(t.i64[i]) + " at position " + std::to_string(i) + " is outside 0.." +
                  std::to_string(classes - 1));
  return t.i64;
}

// Shuffled passes over the images: each step takes the next `batch` of a permutation.
class BatchSampler {
 public:
  BatchSampler(int64_t images, int batch, uint64_t seed) : order_(static_cast<size_t>(images)), batch_(batch), rng_(seed) {
    std::iota(order_.begin(), order_.end(), 0);
    std::shuffle(order_.begin(), order_.end(), rng_);
  }
  std::vector<int64_t> next() {
    std::vector<int64_t> rows;
    while (static_cast<int>(rows.size()) < batch_) {
      if (at_ == order_.size()) {
        std::shuffle(order_.begin(), order_.end(), rng_);
        at_ = 0;
      }
      rows.push_back(order_[at_++]);
    }
    return rows;
  }

 private:
  std::vector<int64_t> order_;
  size_t at_ = 0;
  int batch_;
  std::mt19937_64 rng_;
};

template <typename T>
std::vector<T> gather_rows(const std::vector<T>& all, int64_t row_size, const std::vector<int64_t>& rows) {
  std::vector<T> out;
  out.reserve(rows.size() * static_cast<size_t>(row_size));
  for (int64_t r : rows) out.insert(out.end(), all.begin() + r * row_size, all.begin() + (r + 1) * row_size);
  return out;
}

// Mean of the first and of the last tenth (at least one step) of a loss history.
std::pair<double, double> first_and_last(const std::vector<double>& history) {
  const size_t n = std::max<size_t>(1, history.size() / 10);
  auto mean = [&](size_t from) { return std::accumulate(history.begin() + static_cast<long>(from), history.begin() + static_cast<long>(from + n), 0.0) / static_cast<double>(n); };
  return {mean(0), mean(history.size() - n)};
}

double recent_mean(const std::vector<double>& history) {
  const size_t n = std::min<size_t>(10, history.size());
  return std::accumulate(history.end() - static_cast<long>(n), history.end(), 0.0) / static_cast<double>(n);
}

std::string fixed(double v, int digits = 3) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

}  // namespace

int finetune(const FinetuneArgs& a) {
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
  const int64_t count = images.shape[0], image_size = images.elements() / count;
  const std::vector<int64_t> labels = load_labels(a, *g_model, count);
  if (a.batch > count)
    throw Error("--batch " + std::to_string(a.batch) + " is larger than the " + std::to_string(count) + " images in '" + a.data +
                "'; use --batch " + std::to_string(count) + " or fewer");

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
    auto d_model = edgegan_cli::load_model(a.discriminator);
    if (takes_labels(*d_model) != !labels.empty())
      throw Error(std::string("the discriminator ") + (labels.empty() ? "takes labels but the generator does not" : "takes no labels but the generator does"));
    if (a.discriminator_learning_rate > 0.f) options.learning_rate = a.discriminator_learning_rate;
    d = std::make_unique<edgegan::Trainer>(d_model, options);
  } else if (a.discriminator_learning_rate > 0.f) {
    throw Error("--d-lr needs --discriminator");
  }

  const int64_t nz = g_model->noise_size();
  // Without a discriminator each image keeps one noise vector for the whole run.
  const std::vector<float> paired_noise = d ? std::vector<float>{} : edgegan::normal_noise(static_cast<size_t>(count * nz), a.seed);
  const edgegan::Loss loss = a.loss == "l1" ? edgegan::Loss::kL1 : edgegan::Loss::kMse;
  BatchSampler sampler(count, a.batch, a.seed);
  std::vector<double> d_history, g_history;
  ProgressBar bar(std::cerr, a.steps, ::isatty(2) != 0);

  for (int64_t step = 1; step <= a.steps; ++step) {
    const std::vector<int64_t> rows = sampler.next();
    const std::vector<int64_t> batch_labels = labels.empty() ? std::vector<int64_t>{} : gather_rows(labels, 1, rows);
    std::string figures;
    if (d) {
      edgegan::GanBatch batch{gather_rows(images.f32, image_size, rows), batch_labels,
                              edgegan::normal_noise(static_cast<size_t>(a.batch * nz), a.seed * 1000003 + static_cast<uint64_t>(step)), batch_labels};
      const edgegan::GanLosses l = edgegan::gan_step(g, *d, batch);
      d_history.push_back(l.discriminator_real + l.discriminator_fake);
      g_history.push_back(l.generator);
      figures = "D " + fixed(recent_mean(d_history)) + "  G " + fixed(recent_mean(g_history));
    } else {
      const edgegan::Tensor made = g.forward(edgegan::batch_inputs(*g_model, a.batch, gather_rows(paired_noise, nz, rows), batch_labels)).front();
      edgegan::Tensor gradient;
      g_history.push_back(edgegan::loss_and_gradient(loss, made, gather_rows(images.f32, image_size, rows), &gradient));
      g.backward({gradient});
      g.step();
      figures = a.loss + " " + fixed(recent_mean(g_history), 4);
    }
    if (!std::isfinite(g_history.back()) || (!d_history.empty() && !std::isfinite(d_history.back())))
      throw Error("the loss became " + fixed(g_history.back()) + " at step " + std::to_string(step) +
                  "; lower the learning rate (--lr). Nothing was written");
    if (!a.quiet) bar.update(step, figures);
  }
  if (!a.quiet) bar.finish();
  const double seconds = bar.elapsed_seconds();

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

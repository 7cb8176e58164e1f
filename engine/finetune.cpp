#include "edgegan/finetune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include "engine/text_stream.h"

namespace edgegan {
namespace {

std::string shape_text(const std::vector<int64_t>& d) {
  auto os = text_stream();
  os << "[";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << (d[i] < 0 ? std::string("N") : std::to_string(d[i]));
  os << "]";
  return os.str();
}

int64_t label_classes(const Model& m) {
  for (const InputInfo& in : m.inputs())
    if (in.role == InputRole::kLabel) return in.label_count;
  return 0;
}

// The images must be what the generator makes: its output shape, finite, in its value range.
void check_images(const Model& g, const Tensor& images) {
  if (g.noise_size() == 0) throw Error("finetune: the generator has no noise input");
  if (g.outputs().size() != 1)
    throw Error("finetune: the generator has " + std::to_string(g.outputs().size()) + " outputs; fine-tuning needs one image output");
  const OutputInfo& out = g.outputs().front();
  if (images.dtype != DType::kFloat32) throw Error("finetune: the images must be float32");
  const bool shape_ok = images.shape.size() == out.dims.size() && !images.shape.empty() && images.shape[0] >= 1 &&
                        std::equal(out.dims.begin() + 1, out.dims.end(), images.shape.begin() + 1);
  if (!shape_ok || static_cast<int64_t>(images.f32.size()) != images.elements())
    throw Error("finetune: the images have shape " + shape_text(images.shape) + ", the generator makes " + shape_text(out.dims) +
                (out.layout == Layout::kNHWC ? " (NHWC)" : ""));
  float lo = INFINITY, hi = -INFINITY;
  for (float v : images.f32) {
    if (!std::isfinite(v)) throw Error("finetune: the images hold a NaN or infinite value");
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isnan(out.value_min)) {
    const float slack = 0.01f * (out.value_max - out.value_min);
    if (lo < out.value_min - slack || hi > out.value_max + slack) {
      auto os = text_stream();
      os << "finetune: the images' values span [" << lo << ", " << hi << "], but the generator's output lies in [" << out.value_min
         << ", " << out.value_max << "]; rescale the images to that range";
      throw Error(os.str());
    }
  }
}

void check_labels(const Model& g, const std::vector<int64_t>& labels, int64_t images) {
  const int64_t classes = label_classes(g);
  if (classes == 0) {
    if (!labels.empty()) throw Error("finetune: labels given, but the generator is not conditional");
    return;
  }
  if (static_cast<int64_t>(labels.size()) != images)
    throw Error("finetune: the generator is conditional (" + std::to_string(classes) + " classes): give one label per image (" +
                std::to_string(images) + "), got " + std::to_string(labels.size()));
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < 0 || labels[i] >= classes)
      throw Error("finetune: label " + std::to_string(labels[i]) + " at position " + std::to_string(i) + " is outside 0.." +
                  std::to_string(classes - 1));
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

double recent_mean(const std::vector<double>& history) {
  const size_t n = std::min<size_t>(10, history.size());
  return n == 0 ? 0.0 : std::accumulate(history.end() - static_cast<long>(n), history.end(), 0.0) / static_cast<double>(n);
}

// A tensor of whole samples shaped as `dims` (dims[0] is the batch), float32 and finite.
void check_samples(const Tensor& t, const std::vector<int64_t>& dims, Layout layout, const std::string& what) {
  if (t.dtype != DType::kFloat32) throw Error("finetune: the " + what + " must be float32");
  const bool shape_ok = t.shape.size() == dims.size() && !t.shape.empty() && t.shape[0] >= 1 &&
                        std::equal(dims.begin() + 1, dims.end(), t.shape.begin() + 1);
  if (!shape_ok || static_cast<int64_t>(t.f32.size()) != t.elements())
    throw Error("finetune: the " + what + " have shape " + shape_text(t.shape) + ", the model's is " + shape_text(dims) +
                (layout == Layout::kNHWC ? " (NHWC)" : ""));
  for (float v : t.f32)
    if (!std::isfinite(v)) throw Error("finetune: the " + what + " hold a NaN or infinite value");
}

}  // namespace

FinetuneResult finetune_paired(Trainer& g, const Tensor& inputs, const Tensor& targets, const FinetuneOptions& options,
                               const std::function<bool(const FinetuneProgress&)>& on_step) {
  const Model& m = g.model();
  if (m.inputs().size() != 1 || m.inputs().front().dtype != DType::kFloat32)
    throw Error("finetune: paired fine-tuning needs a model with one float input; this one has " + std::to_string(m.inputs().size()) + " inputs");
  if (m.outputs().size() != 1)
    throw Error("finetune: the model has " + std::to_string(m.outputs().size()) + " outputs; paired fine-tuning needs one");
  const InputInfo& in = m.inputs().front();
  const OutputInfo& out = m.outputs().front();
  check_samples(inputs, in.dims, in.layout, "inputs");
  check_samples(targets, out.dims, out.layout, "targets");
  const int64_t count = inputs.shape[0];
  if (targets.shape[0] != count)
    throw Error("finetune: " + std::to_string(count) + " inputs but " + std::to_string(targets.shape[0]) + " targets; give one target per input");
  if (options.steps < 1) throw Error("finetune: steps must be at least 1, got " + std::to_string(options.steps));
  if (options.loss != Loss::kMse && options.loss != Loss::kL1) throw Error("finetune: the paired loss must be MSE or L1");
  const int batch = g.batch();
  if (batch > count)
    throw Error("finetune: the batch (" + std::to_string(batch) + ") is larger than the " + std::to_string(count) + " pairs; use a batch of " +
                std::to_string(count) + " or fewer");
  const int64_t in_size = inputs.elements() / count, out_size = targets.elements() / count;
  BatchSampler sampler(count, batch, options.seed);
  FinetuneResult result;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t step = 1; step <= options.steps; ++step) {
    const std::vector<int64_t> rows = sampler.next();
    Tensor x{in.name, DType::kFloat32, in.layout, in.dims, gather_rows(inputs.f32, in_size, rows), {}};
    x.shape[0] = batch;
    const Tensor made = g.forward({x}).front();
    Tensor gradient;
    result.generator_losses.push_back(loss_and_gradient(options.loss, made, gather_rows(targets.f32, out_size, rows), &gradient));
    g.backward({gradient});
    g.step();
    result.steps = step;
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!std::isfinite(result.generator_losses.back())) {
      auto os = text_stream();
      os << "finetune: the loss became " << result.generator_losses.back() << " at step " << step << "; lower the learning rate";
      throw Error(os.str());
    }
    if (on_step && !on_step({step, options.steps, recent_mean(result.generator_losses), 0.0, result.seconds})) break;
  }
  return result;
}

FinetuneResult finetune(Trainer& g, Trainer* d, const Tensor& images, const std::vector<int64_t>& labels, const FinetuneOptions& options,
                        const std::function<bool(const FinetuneProgress&)>& on_step) {
  const Model& g_model = g.model();
  check_images(g_model, images);
  const int64_t count = images.shape[0], image_size = images.elements() / count;
  check_labels(g_model, labels, count);
  if (options.steps < 1) throw Error("finetune: steps must be at least 1, got " + std::to_string(options.steps));
  if (!d && options.loss != Loss::kMse && options.loss != Loss::kL1) throw Error("finetune: the reconstruction loss must be MSE or L1");
  const int batch = g.batch();
  if (batch > count)
    throw Error("finetune: the batch (" + std::to_string(batch) + ") is larger than the " + std::to_string(count) + " images; use a batch of " +
                std::to_string(count) + " or fewer");
  if (d && (label_classes(d->model()) > 0) != !labels.empty())
    throw Error(std::string("the discriminator ") + (labels.empty() ? "takes labels but the generator does not" : "takes no labels but the generator does"));

  const int64_t nz = g_model.noise_size();
  // Without a discriminator each image keeps one noise vector for the whole run.
  const std::vector<float> paired_noise = d ? std::vector<float>{} : normal_noise(static_cast<size_t>(count * nz), options.seed);
  BatchSampler sampler(count, batch, options.seed);
  FinetuneResult result;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t step = 1; step <= options.steps; ++step) {
    const std::vector<int64_t> rows = sampler.next();
    const std::vector<int64_t> batch_labels = labels.empty() ? std::vector<int64_t>{} : gather_rows(labels, 1, rows);
    if (d) {
      GanBatch gan_batch{gather_rows(images.f32, image_size, rows), batch_labels,
                         normal_noise(static_cast<size_t>(batch * nz), options.seed * 1000003 + static_cast<uint64_t>(step)), batch_labels};
      const GanLosses l = gan_step(g, *d, gan_batch);
      result.discriminator_losses.push_back(l.discriminator_real + l.discriminator_fake);
      result.generator_losses.push_back(l.generator);
    } else {
      const Tensor made = g.forward(batch_inputs(g_model, batch, gather_rows(paired_noise, nz, rows), batch_labels)).front();
      Tensor gradient;
      result.generator_losses.push_back(loss_and_gradient(options.loss, made, gather_rows(images.f32, image_size, rows), &gradient));
      g.backward({gradient});
      g.step();
    }
    result.steps = step;
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double g_loss = result.generator_losses.back();
    const double d_loss = d ? result.discriminator_losses.back() : 0.0;
    if (!std::isfinite(g_loss) || !std::isfinite(d_loss)) {
      auto os = text_stream();
      os << "finetune: the loss became " << (std::isfinite(g_loss) ? d_loss : g_loss) << " at step " << step << "; lower the learning rate";
      throw Error(os.str());
    }
    if (on_step && !on_step({step, options.steps, recent_mean(result.generator_losses), recent_mean(result.discriminator_losses), result.seconds}))
      break;
  }
  return result;
}

}  // namespace edgegan

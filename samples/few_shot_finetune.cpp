// Few-shot adaptation with the public training API: the shipped digits DCGAN
// (which draws all ten digits) is fine-tuned adversarially on 32 sevens, and the
// same noise is drawn before and after, so the grid shows each image change.
//
//   build/samples/few_shot_finetune [--steps 200] [--threads 2] [--out few_shot.png]
//
// Output: one PNG, 8 columns; the top two rows are the model before, the bottom two
// after. It also prints how far the images are from the average seven (mean squared
// distance), before and after.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "edgegan/edgegan.h"
#include "edgegan/image_io.h"
#include "edgegan/io.h"
#include "edgegan/trainer.h"

namespace {

constexpr int kShown = 16, kBatch = 16;

double distance_to(const edgegan::Tensor& images, const std::vector<float>& mean_image) {
  const size_t size = mean_image.size(), count = images.f32.size() / size;
  double sum = 0;
  for (size_t i = 0; i < count; ++i)
    for (size_t k = 0; k < size; ++k) {
      const double d = images.f32[i * size + k] - mean_image[k];
      sum += d * d;
    }
  return sum / static_cast<double>(count * size);
}

}  // namespace

int main(int argc, char** argv) try {
  std::string root = EDGEGAN_SOURCE_DIR, out = "few_shot.png";
  int steps = 200, threads = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--out")) out = argv[i + 1];
    else throw edgegan::Error(std::string("unknown argument '") + argv[i] + "' (use --steps N, --threads T, --out FILE)");
  }
  if (steps < 1) throw edgegan::Error("--steps must be at least 1");
  const auto g_model = edgegan::Model::load(root + "/models/dcgan_digits/generator.egan");
  const auto d_model = edgegan::Model::load(root + "/models/dcgan_digits/discriminator.egan");
  const edgegan::Tensor sevens = edgegan::to_nhwc(edgegan::read_npy(root + "/models/few_shot/sevens_32.npy"));
  const int64_t count = sevens.shape[0], size = sevens.elements() / count, nz = g_model->noise_size();

  std::vector<float> mean_seven(static_cast<size_t>(size), 0.f);
  for (int64_t i = 0; i < count; ++i)
    for (int64_t k = 0; k < size; ++k) mean_seven[static_cast<size_t>(k)] += sevens.f32[static_cast<size_t>(i * size + k)] / static_cast<float>(count);

  const std::vector<float> shown_noise = edgegan::normal_noise(kShown * nz, /*seed=*/7);
  edgegan::Session before_session(g_model, {.threads = threads, .batch = kShown});
  const edgegan::Tensor before = before_session.generate(shown_noise);

  // Only G's first layer (noise -> 4x4 features) adapts, fast, against a slowly adapting D:
  // it decides which digit a noise vector becomes, while the frozen upsampling layers keep
  // drawing clean strokes. With every weight free, 32 images either change nothing (low
  // learning rates) or let G find high-frequency patterns that fool D (higher ones).
  std::vector<int> frozen;
  for (int op = 1; op < static_cast<int>(g_model->ops().size()); ++op) frozen.push_back(op);
  edgegan::Trainer g(g_model, {.batch = kBatch, .threads = threads, .learning_rate = 4e-3f, .frozen_ops = frozen});
  edgegan::Trainer d(d_model, {.batch = kBatch, .threads = threads, .learning_rate = 5e-5f});
  for (int step = 1; step <= steps; ++step) {
    edgegan::GanBatch batch;
    for (int i = 0; i < kBatch; ++i) {
      const int64_t row = (static_cast<int64_t>(step) * kBatch + i) % count;
      batch.real_images.insert(batch.real_images.end(), sevens.f32.begin() + row * size, sevens.f32.begin() + (row + 1) * size);
    }
    batch.noise = edgegan::normal_noise(static_cast<size_t>(kBatch * nz), 1000 + static_cast<uint64_t>(step));
    const edgegan::GanLosses l = edgegan::gan_step(g, d, batch);
    if (step % 50 == 0 || step == steps)
      std::printf("step %4d  D %.3f  G %.3f\n", step, l.discriminator_real + l.discriminator_fake, l.generator);
  }

  // The tuned weights go through a saved file, as a user would ship them.
  const std::string tuned_path = out + ".egan";
  g.save(tuned_path, root + "/models/dcgan_digits/generator.egan");
  edgegan::Session after_session(edgegan::Model::load(tuned_path), {.threads = threads, .batch = kShown});
  const edgegan::Tensor after = after_session.generate(shown_noise);

  edgegan::Tensor grid = before;
  grid.shape[0] = 2 * kShown;
  grid.f32.insert(grid.f32.end(), after.f32.begin(), after.f32.end());
  edgegan::write_png_grid(out, grid, 8, 4, -1.f, 1.f);
  std::printf("mean squared distance to the average seven: before %.4f, after %.4f\n", distance_to(before, mean_seven),
              distance_to(after, mean_seven));
  std::printf("wrote %s (top two rows: before; bottom two: after) and %s\n", out.c_str(), tuned_path.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "few_shot_finetune: %s\n", e.what());
  return 1;
}

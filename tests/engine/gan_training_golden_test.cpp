// Whole GAN training steps against PyTorch (tests/golden/training, written by
// make_training_goldens.py): after one step every parameter gradient of G and D
// matches torch.autograd, and after 20 Adam steps of the DCGAN recipe the losses
// and every weight still match torch.optim.Adam's.
//
// Expected gradients and weights are stored as ONNX models of the same
// architecture, so the converter lays them out exactly as it lays out the
// weights (transposed convolutions split into phases, dense weights transposed)
// and they can be compared parameter by parameter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "edgegan/io.h"
#include "edgegan/trainer.h"
#include "tests/test_models/test_models.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

std::filesystem::path case_dir(const std::string& name) { return testing::golden_dir().parent_path() / "training" / name; }

// The case's model, converted by make_test_models (training/CASE/NAME).
std::shared_ptr<const Model> convert(const std::filesystem::path& onnx) {
  return testing::test_model("training/" + onnx.parent_path().filename().string() + "/" + onnx.stem().string());
}

// The case's data for step s, in the engine's layouts.
struct StepData {
  Tensor real_pool;  // NHWC
  std::vector<int64_t> real_labels;
  Tensor noise;
  Tensor fake_labels;
  bool conditional = false;

  explicit StepData(const std::filesystem::path& dir) {
    real_pool = to_nhwc(read_npy((dir / "real.npy").string()));
    noise = read_npy((dir / "noise.npy").string());
    conditional = std::filesystem::exists(dir / "real_labels.npy");
    if (conditional) {
      real_labels = read_npy((dir / "real_labels.npy").string()).i64;
      fake_labels = read_npy((dir / "fake_labels.npy").string());
    }
  }
  int64_t steps() const { return noise.shape[0]; }
  int64_t batch() const { return noise.shape[1]; }

  GanBatch at(int64_t s) const {
    GanBatch b;
    const int64_t pool = real_pool.shape[0], image = real_pool.elements() / pool, nz = noise.shape[2];
    for (int64_t i = 0; i < batch(); ++i) {
      const int64_t row = (s * batch() + i) % pool;  // as make_training_goldens.py picks them
      b.real_images.insert(b.real_images.end(), real_pool.f32.begin() + row * image, real_pool.f32.begin() + (row + 1) * image);
      if (conditional) b.real_labels.push_back(real_labels[static_cast<size_t>(row)]);
    }
    b.noise.assign(noise.f32.begin() + s * batch() * nz, noise.f32.begin() + (s + 1) * batch() * nz);
    if (conditional) b.fake_labels.assign(fake_labels.i64.begin() + s * batch(), fake_labels.i64.begin() + (s + 1) * batch());
    return b;
  }
};

TrainerOptions torch_adam(int batch) {
  return {.batch = batch, .threads = 2, .optimizer = Optimizer::kAdam, .learning_rate = 2e-4f, .beta1 = 0.5f, .beta2 = 0.999f, .eps = 1e-8f};
}

// Every tensor of `got` against `want` (same order and sizes): max |got - want| <= tol * max |want|.
void expect_tensors_match(const std::vector<const std::vector<float>*>& got, Trainer& want_model, double tol, const std::string& what) {
  std::vector<Parameter> want = want_model.parameters();
  ASSERT_EQ(got.size(), want.size()) << what << ": parameter count";
  for (size_t p = 0; p < want.size(); ++p) {
    const std::vector<float>& a = *got[p];
    const std::vector<float>& b = *want[p].values;
    ASSERT_EQ(a.size(), b.size()) << what << " parameter " << p << " (" << want[p].name << ")";
    double scale = 0, worst = 0;
    size_t worst_at = 0;
    for (size_t i = 0; i < b.size(); ++i) {
      scale = std::max(scale, static_cast<double>(std::abs(b[i])));
      const double e = std::abs(static_cast<double>(a[i]) - b[i]);
      if (e > worst) worst = e, worst_at = i;
    }
    EXPECT_LE(worst, tol * scale) << what << " parameter " << p << " (" << want[p].name << "): element " << worst_at << " is "
                                  << a[worst_at] << ", PyTorch " << b[worst_at] << " (scale " << scale << ")";
  }
}

std::vector<const std::vector<float>*> gradients_of(Trainer& t) {
  std::vector<const std::vector<float>*> out;
  for (Parameter& p : t.parameters()) out.push_back(p.gradient);
  return out;
}
std::vector<const std::vector<float>*> values_of(Trainer& t) {
  std::vector<const std::vector<float>*> out;
  for (Parameter& p : t.parameters()) out.push_back(p.values);
  return out;
}

class GanTrainingGolden : public ::testing::TestWithParam<std::string> {};

// Step 1 composed from the Trainer API by hand (what a user with their own loss writes).
TEST_P(GanTrainingGolden, FirstStepGradientsMatchAutograd) {
  const auto dir = case_dir(GetParam());
  const StepData data(dir);
  const int batch = static_cast<int>(data.batch());
  Trainer g(convert(dir / "generator.onnx"), torch_adam(batch));
  Trainer d(convert(dir / "discriminator.onnx"), torch_adam(batch));
  Trainer want_g(convert(dir / "step1_generator_grads.onnx"), torch_adam(batch));
  Trainer want_d(convert(dir / "step1_discriminator_grads.onnx"), torch_adam(batch));
  const GanBatch b = data.at(0);

  auto bce_grad = [&](const Tensor& logits, float target) {
    Tensor grad = logits;  // d/dx mean BCE-with-logits = (sigmoid(x) - target) / N
    for (float& x : grad.f32) x = (1.f / (1.f + std::exp(-x)) - target) / static_cast<float>(grad.f32.size());
    return grad;
  };

  const std::vector<float> fake = g.forward(batch_inputs(g.model(), batch, b.noise, b.fake_labels)).front().f32;
  d.backward({bce_grad(d.forward(batch_inputs(d.model(), batch, b.real_images, b.real_labels)).front(), 1.f)});
  d.backward({bce_grad(d.forward(batch_inputs(d.model(), batch, fake, b.fake_labels)).front(), 0.f)});
  expect_tensors_match(gradients_of(d), want_d, 1e-4, "discriminator gradient");
  d.step();
  std::vector<Tensor> d_in = d.backward({bce_grad(d.forward(batch_inputs(d.model(), batch, fake, b.fake_labels)).front(), 1.f)});
  g.backward({d_in.front()});
  expect_tensors_match(gradients_of(g), want_g, 1e-4, "generator gradient");
}

TEST_P(GanTrainingGolden, TwentyAdamStepsFollowPyTorch) {
  const auto dir = case_dir(GetParam());
  const StepData data(dir);
  const int batch = static_cast<int>(data.batch());
  Trainer g(convert(dir / "generator.onnx"), torch_adam(batch));
  Trainer d(convert(dir / "discriminator.onnx"), torch_adam(batch));
  const Tensor losses = read_npy((dir / "losses.npy").string());
  ASSERT_EQ(losses.shape, (std::vector<int64_t>{data.steps(), 3}));
  for (int64_t s = 0; s < data.steps(); ++s) {
    const GanLosses l = gan_step(g, d, data.at(s));
    const double got[3] = {l.discriminator_real, l.discriminator_fake, l.generator};
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(got[k], losses.f32[static_cast<size_t>(s * 3 + k)], 1e-4) << "step " << s + 1 << " loss " << k;
  }
  EXPECT_EQ(g.steps_taken(), data.steps());
  Trainer want_g(convert(dir / "final_generator.onnx"), torch_adam(batch));
  Trainer want_d(convert(dir / "final_discriminator.onnx"), torch_adam(batch));
  expect_tensors_match(values_of(g), want_g, 1e-3, "generator weights after 20 steps");
  expect_tensors_match(values_of(d), want_d, 1e-3, "discriminator weights after 20 steps");
}

INSTANTIATE_TEST_SUITE_P(Cases, GanTrainingGolden, ::testing::Values("dcgan_step", "cgan_step"));

// Paired fine-tuning of a zoo generator (Real-ESRGAN's compact network: conv, per-channel
// PReLU, PixelShuffle, nearest-upsampled input added) against PyTorch autograd and
// torch.optim.Adam (tests/golden/make_paired_training_golden.py): the first step's
// parameter gradients, every step's MSE, and the weights after ten steps.
TEST(PairedTrainingGolden, ZooGeneratorFollowsPyTorch) {
  const auto dir = case_dir("zoo_realesrgan_paired");
  const Tensor inputs = to_nhwc(read_npy((dir / "inputs.npy").string()));
  const Tensor targets = to_nhwc(read_npy((dir / "targets.npy").string()));
  const Tensor losses = read_npy((dir / "losses.npy").string());
  const int batch = static_cast<int>(inputs.shape[0]);
  TrainerOptions options = torch_adam(batch);
  options.learning_rate = 1e-3f;
  Trainer g(convert(dir / "model.onnx"), options);
  Tensor x = inputs;
  x.name = g.model().inputs()[0].name;
  for (int64_t s = 0; s < losses.shape[0]; ++s) {
    const Tensor made = g.forward({x}).front();
    Tensor gradient;
    const double loss = loss_and_gradient(Loss::kMse, made, targets.f32, &gradient);
    EXPECT_NEAR(loss, losses.f32[static_cast<size_t>(s)], 1e-5 * std::max(1.0, std::abs(loss))) << "step " << s + 1;
    g.backward({gradient});
    if (s == 0) {
      Trainer want(convert(dir / "step1_grads.onnx"), options);
      expect_tensors_match(gradients_of(g), want, 1e-4, "first step's gradient");
    }
    g.step();
  }
  Trainer want(convert(dir / "final.onnx"), options);
  expect_tensors_match(values_of(g), want, 1e-4, "weights after ten steps");
}

TEST(GanStep, MismatchedPairsAreClearErrors) {
  const auto dir = case_dir("dcgan_step");
  const StepData data(dir);
  Trainer g(convert(dir / "generator.onnx"), torch_adam(8));
  Trainer d4(convert(dir / "discriminator.onnx"), torch_adam(4));
  try {
    gan_step(g, d4, data.at(0));
    FAIL() << "a batch mismatch was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch 8"), std::string::npos) << e.what();
  }
  // The cGAN's discriminator takes 16x16 images, the DCGAN's generator makes 32x32.
  Trainer other_d(convert(case_dir("cgan_step") / "discriminator.onnx"), torch_adam(8));
  try {
    gan_step(g, other_d, data.at(0));
    FAIL() << "a shape mismatch was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not take the generator's output"), std::string::npos) << e.what();
  }
  GanBatch bad = data.at(0);
  bad.fake_labels = {1, 2, 3};
  Trainer d(convert(dir / "discriminator.onnx"), torch_adam(8));
  try {
    gan_step(g, d, bad);
    FAIL() << "labels for an unconditional pair were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("takes none"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace edgegan

// The engine against PyTorch: every case under tests/golden/cases holds an ONNX
// model exported from PyTorch, its inputs and PyTorch's outputs (.npy). Each is
// converted, run on every backend (CPU and CUDA: one suite, the same tolerances; a
// backend that cannot run here is skipped with its reason) with every transposed-convolution
// algorithm and, on the CPU, thread count, and must match within 1e-4 max abs
// error. Regenerate with tests/golden/make_goldens.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "edgegan/edgegan.h"
#include "engine/backend/backend.h"
#include "edgegan/io.h"
#include "tests/test_models/test_models.h"
#include "tests/test_util.h"
#include "tests/vulkan_test_env.h"

namespace edgegan {
namespace {

namespace fs = std::filesystem;
using edgegan::testing::golden_dir;
using edgegan::testing::max_abs_diff;
using edgegan::testing::read_file;
using edgegan::testing::source_dir;

std::vector<std::string> golden_cases() {
  std::vector<std::string> names;
  if (fs::exists(golden_dir()))
    for (const auto& e : fs::directory_iterator(golden_dir()))
      if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<Tensor> npy_dir(const fs::path& dir) {
  std::vector<Tensor> tensors;
  for (const auto& e : fs::directory_iterator(dir)) {
    Tensor t = read_npy(e.path().string());
    t.name = e.path().stem().string();
    tensors.push_back(std::move(t));
  }
  return tensors;
}

// (backend, case)
class Golden : public ::testing::TestWithParam<std::tuple<Backend, std::string>> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::kVulkanTestEnvironment);  // set before main() (see the header)
    std::string why;
    if (!backend_available(backend(), &why)) GTEST_SKIP() << why;
    // Ops a backend refuses (the CUDA backend's missing ops) skip the case on that
    // backend, with the refusal's message.
    const std::string refusal = testing::backend_refusal(testing::test_model("golden/" + name()), backend());
    if (!refusal.empty()) GTEST_SKIP() << refusal;
  }
  // The Vulkan validation layer (on in ctest's environment) reported nothing.
  void TearDown() override {
    if (backend() == Backend::kVulkan) {
      EXPECT_EQ(vulkan_validation_messages(), 0) << "the Vulkan validation layer reported the messages above";
    }
  }
  Backend backend() const { return std::get<0>(GetParam()); }
  const std::string& name() const { return std::get<1>(GetParam()); }
  std::vector<int> thread_counts() const { return backend() == Backend::kCpu ? std::vector<int>{1, 2} : std::vector<int>{1}; }
};

TEST_P(Golden, MatchesPyTorch) {
  const fs::path dir = golden_dir() / name();
  const auto model = testing::test_model("golden/" + name());
  std::vector<Tensor> inputs = npy_dir(dir / "inputs");
  const std::vector<Tensor> expected = npy_dir(dir / "outputs");
  ASSERT_FALSE(inputs.empty());
  ASSERT_EQ(expected.size(), model->outputs().size());
  for (Tensor& t : inputs)
    for (const InputInfo& info : model->inputs())
      if (info.name == t.name && info.layout == Layout::kNHWC) t = to_nhwc(t);

  std::vector<float> first_run;
  for (ConvTranspose2DAlgo algo : {ConvTranspose2DAlgo::kSplit, ConvTranspose2DAlgo::kZeroInsert, ConvTranspose2DAlgo::kCol2im})
    for (int threads : thread_counts()) {
      SCOPED_TRACE(std::string(to_string(algo)) + ", threads " + std::to_string(threads));
      Session session(model,
                      {.backend = backend(), .threads = threads, .batch = static_cast<int>(inputs[0].shape[0]), .conv_transpose2d_algo = algo});
      const std::vector<Tensor> outputs = session.run(inputs);
      for (const Tensor& out : outputs) {
        const auto want = std::find_if(expected.begin(), expected.end(), [&](const Tensor& e) { return e.name == out.name; });
        ASSERT_NE(want, expected.end()) << "no golden for output " << out.name;
        const Tensor got = to_nchw(out);
        ASSERT_EQ(got.shape, want->shape) << out.name;
        EXPECT_LE(max_abs_diff(got.f32, want->f32), 1e-4f) << out.name;
      }
      // Same ISA path, any thread count (and on CUDA, any run): bit-identical.
      if (algo == ConvTranspose2DAlgo::kSplit) {
        if (first_run.empty()) first_run = outputs[0].f32;
        else EXPECT_EQ(outputs[0].f32, first_run);
      }
    }
}

// fp16 weights (edgegan-convert --weights fp16): the transposed-convolution
// weights are rounded to half precision, computed in fp32 (in half precision on ARM
// builds with EDGEGAN_NEON_FP16_ARITH), and the outputs stay within 1e-2 of PyTorch's
// (fp32) relative to max(1, max|y|) on every case, on the split path (which reads the
// halves in place) and a baseline (which widens them once). Relative, because some
// generators' outputs are not squashed (ProGAN's reach 4.5).
TEST_P(Golden, Fp16WeightsStayWithinOneHundredthOfPyTorch) {
  const fs::path dir = golden_dir() / name();
  const auto model = testing::test_model("golden/" + name() + ".fp16");
  // (The shipped models' files halving is checked in the cli test; these small
  // cases are mostly flatbuffer and alignment.)
  EXPECT_LE(std::filesystem::file_size(testing::test_model_path("golden/" + name() + ".fp16")),
            std::filesystem::file_size(testing::test_model_path("golden/" + name())));
  for (const OpInfo& op : model->ops())
    if (op.kind == "ConvTranspose2D") {
      EXPECT_TRUE(op.fp16_weights) << op.name;
    }
  std::vector<Tensor> inputs = npy_dir(dir / "inputs");
  const std::vector<Tensor> expected = npy_dir(dir / "outputs");
  for (Tensor& t : inputs)
    for (const InputInfo& info : model->inputs())
      if (info.name == t.name && info.layout == Layout::kNHWC) t = to_nhwc(t);
  for (ConvTranspose2DAlgo algo : {ConvTranspose2DAlgo::kSplit, ConvTranspose2DAlgo::kZeroInsert}) {
    SCOPED_TRACE(to_string(algo));
    Session session(model, {.backend = backend(), .threads = 2, .batch = static_cast<int>(inputs[0].shape[0]), .conv_transpose2d_algo = algo});
    for (const Tensor& out : session.run(inputs)) {
      const auto want = std::find_if(expected.begin(), expected.end(), [&](const Tensor& e) { return e.name == out.name; });
      ASSERT_NE(want, expected.end()) << out.name;
      float scale = 1.f;
      for (float v : want->f32) scale = std::max(scale, std::abs(v));
      EXPECT_LE(max_abs_diff(to_nchw(out).f32, want->f32), 1e-2f * scale) << out.name;
    }
  }
}

// fp16 storage (--precision fp16: the arena's activations as halves, on Vulkan the
// weights too, float arithmetic; the CPU through its adapter, docs/cpu-precision.md) on
// the backends that run it (the others skip, saying why): within
// 2e-2 of PyTorch relative to max(1, max|y|). (fp16-weight files, whose halves are
// uploaded as they are, run in VulkanBackend.Fp16StorageAgreesWithTheCpu.)
TEST_P(Golden, Fp16StorageStaysWithinTwoHundredthsOfPyTorch) {
  std::string why;
  if (!backend_runs_precision(backend(), Precision::kFp16, &why)) GTEST_SKIP() << why;
  const fs::path dir = golden_dir() / name();
  const auto model = testing::test_model("golden/" + name());
  std::vector<Tensor> inputs = npy_dir(dir / "inputs");
  const std::vector<Tensor> expected = npy_dir(dir / "outputs");
  for (Tensor& t : inputs)
    for (const InputInfo& info : model->inputs())
      if (info.name == t.name && info.layout == Layout::kNHWC) t = to_nhwc(t);
  Session session(model, {.backend = backend(), .threads = 2, .batch = static_cast<int>(inputs[0].shape[0]), .precision = Precision::kFp16});
  for (const Tensor& out : session.run(inputs)) {
    const auto want = std::find_if(expected.begin(), expected.end(), [&](const Tensor& e) { return e.name == out.name; });
    ASSERT_NE(want, expected.end()) << out.name;
    float scale = 1.f;
    for (float v : want->f32) scale = std::max(scale, std::abs(v));
    const float diff = max_abs_diff(to_nchw(out).f32, want->f32);
    RecordProperty(out.name + "_error_over_scale", std::to_string(diff / scale));  // the measured margin (--gtest_output=xml)
    EXPECT_LE(diff, 2e-2f * scale) << out.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::Combine(::testing::Values(Backend::kCpu, Backend::kCuda, Backend::kVulkan), ::testing::ValuesIn(golden_cases())),
                         [](const ::testing::TestParamInfo<std::tuple<Backend, std::string>>& info) {
                           return std::string(to_string(std::get<0>(info.param))) + "_" + std::get<1>(info.param);
                         });

TEST(GoldenSuite, HasTheRequiredCases) {
  const auto cases = golden_cases();
  EXPECT_GE(cases.size(), 8u);
  for (const char* required : {"dcgan_digits_generator", "cgan_digits_generator", "dcgan_digits_discriminator", "cgan_digits_discriminator"})
    EXPECT_NE(std::find(cases.begin(), cases.end(), required), cases.end()) << required;
}

}  // namespace
}  // namespace edgegan

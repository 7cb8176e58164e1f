// What every backend must do alike, from one suite (the CPU is the reference): the
// same outputs on every test and shipped model within 1e-4, with every
// transposed-convolution algorithm and fp16 weights; the memory report's figure equal
// to what the session allocated; bad labels refused with the same message; runs
// bit-identical run to run. Backends that cannot run here are skipped with their
// reason (on a machine without a GPU: the CUDA error text).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <filesystem>

#include "edgegan/edgegan.h"
#include "edgegan/report.h"
#include "tests/test_models/test_models.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

namespace fs = std::filesystem;
using edgegan::testing::max_abs_diff;

// Every model the suites use: the converted test models and the shipped ones.
std::vector<std::string> every_model() {
  std::vector<std::string> paths;
  for (const auto& e : fs::recursive_directory_iterator(testing::test_models_dir()))
    if (e.path().extension() == ".egan") paths.push_back(e.path().string());
  for (const char* shipped : {"models/dcgan_digits/generator.egan", "models/dcgan_digits/discriminator.egan", "models/cgan_digits/generator.egan",
                              "models/cgan_digits/discriminator.egan"})
    paths.push_back((testing::source_dir() / shipped).string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Inputs for any model: normal values for float inputs, labels cycling through the classes.
std::vector<Tensor> inputs_for(const Model& model, int batch, uint64_t seed) {
  std::vector<Tensor> inputs;
  for (const InputInfo& info : model.inputs()) {
    Tensor t;
    t.name = info.name;
    t.dtype = info.dtype;
    t.layout = info.layout;
    t.shape = info.dims;
    t.shape[0] = batch;
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    if (info.dtype == DType::kInt64) {
      const int64_t classes = std::max<int64_t>(1, info.label_count);
      for (int64_t i = 0; i < count; ++i) t.i64.push_back(i % classes);
    } else {
      t.f32 = normal_noise(static_cast<size_t>(count), seed);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

class OtherBackend : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    std::string why;
    if (!backend_available(GetParam(), &why)) GTEST_SKIP() << why;
  }
  SessionOptions options(int batch, ConvTranspose2DAlgo algo) const {
    SessionOptions o;
    o.backend = GetParam();
    o.threads = 2;
    o.batch = batch;
    o.conv_transpose2d_algo = algo;
    return o;
  }
};

TEST_P(OtherBackend, AgreesWithTheCpuOnEveryModel) {
  const auto paths = every_model();
  ASSERT_GE(paths.size(), 40u);
  for (const std::string& path : paths) {
    const auto model = Model::load(path);
    // A model with an op this backend lacks is left out (the refusal names the op).
    if (!testing::backend_refusal(model, GetParam()).empty()) continue;
    for (int batch : {1, 3}) {
      const auto inputs = inputs_for(*model, batch, 7);
      SessionOptions cpu_options;
      cpu_options.threads = 2;
      cpu_options.batch = batch;
      const auto want = Session(model, cpu_options).run(inputs);
      for (ConvTranspose2DAlgo algo : {ConvTranspose2DAlgo::kSplit, ConvTranspose2DAlgo::kZeroInsert, ConvTranspose2DAlgo::kCol2im}) {
        SCOPED_TRACE(path + ", batch " + std::to_string(batch) + ", " + to_string(algo));
        Session session(model, options(batch, algo));
        const auto got = session.run(inputs);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(got[i].shape, want[i].shape);
          EXPECT_LE(max_abs_diff(got[i].f32, want[i].f32), 1e-4f) << got[i].name;
        }
        // A second run (a recorded graph's replay on CUDA) gives the same bits.
        EXPECT_EQ(session.run(inputs)[0].f32, got[0].f32);
      }
    }
  }
}

// The convolution families the CUDA backend once refused (grouped and depthwise
// convolutions, transposed ones too, fused input maps, fused residuals, GroupNorm and
// InstanceNorm, sliding-channel convolutions) are taken, so the comparisons above and
// the golden cases cannot skip them silently.
TEST_P(OtherBackend, TakesEveryConvolutionFamily) {
  for (const char* name : {"conv_grouped_depthwise_mult2", "inverted_residual_depthwise", "conv_transpose2d_grouped", "conv_transpose2d_grouped.fp16",
                           "resize_nearest_upsample_conv", "norm_group_norm_torch", "norm_instance_transformer", "scc_gather", "scc_slices",
                           "scc_dw_generator", "zoo_cyclegan_resnet", "zoo_fast_style", "zoo_patchgan", "hifigan_1d_residual"})
    EXPECT_EQ(testing::backend_refusal(testing::test_model(std::string("golden/") + name), GetParam()), "") << name;
}

TEST_P(OtherBackend, ReportEqualsWhatTheSessionAllocated) {
  const auto model = Model::load((testing::source_dir() / "models/cgan_digits/generator.egan").string());
  for (int batch : {1, 16})
    for (ConvTranspose2DAlgo algo : {ConvTranspose2DAlgo::kSplit, ConvTranspose2DAlgo::kZeroInsert, ConvTranspose2DAlgo::kCol2im}) {
      SCOPED_TRACE(std::to_string(batch) + " " + to_string(algo));
      const MemoryReport report = memory_report(model, options(batch, algo));
      Session session(model, options(batch, algo));
      EXPECT_EQ(report.backend, GetParam() == Backend::kCuda ? "cuda" : "cpu");
      EXPECT_EQ(session.measured_allocation_bytes(), report.totals.session_bytes);
      EXPECT_EQ(session.arena_bytes(), report.totals.arena_bytes);
      session.run(inputs_for(*model, batch, 1));
      EXPECT_EQ(session.measured_allocation_bytes(), report.totals.session_bytes) << "a run allocated";
    }
}

// Every op of every test and shipped model has a kernel on this backend: none is
// refused (the refusals are listed when one is).
TEST_P(OtherBackend, RunsEveryTestAndShippedModel) {
  std::string refused;
  for (const std::string& path : every_model()) {
    const std::string why = testing::backend_refusal(Model::load(path), GetParam());
    if (!why.empty()) refused += "\n  " + path + ": " + why;
  }
  EXPECT_TRUE(refused.empty()) << "refused:" << refused;
}

// The report's device figure is what the session allocates, on every model (the
// kernels' uploads, tables and scratch included), and a run allocates nothing more.
TEST_P(OtherBackend, ReportEqualsWhatTheSessionAllocatedOnEveryModel) {
  for (const std::string& path : every_model()) {
    const auto model = Model::load(path);
    if (!testing::backend_refusal(model, GetParam()).empty()) continue;
    SCOPED_TRACE(path);
    const MemoryReport report = memory_report(model, options(2, ConvTranspose2DAlgo::kSplit));
    Session session(model, options(2, ConvTranspose2DAlgo::kSplit));
    EXPECT_EQ(session.measured_allocation_bytes(), report.totals.session_bytes);
    session.run(inputs_for(*model, 2, 1));
    EXPECT_EQ(session.measured_allocation_bytes(), report.totals.session_bytes) << "a run allocated";
  }
}

TEST_P(OtherBackend, LabelOutsideTheTableIsRefusedByName) {
  const auto model = Model::load((testing::source_dir() / "models/cgan_digits/generator.egan").string());
  Session session(model, options(2, ConvTranspose2DAlgo::kSplit));
  auto inputs = inputs_for(*model, 2, 3);
  for (Tensor& t : inputs)
    if (t.dtype == DType::kInt64) t.i64 = {4, 10};
  try {
    session.run(inputs);
    FAIL() << "label 10 ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("value 10 at position 1 is outside 0..9"), std::string::npos) << e.what();
  }
  // The session stays usable.
  for (Tensor& t : inputs)
    if (t.dtype == DType::kInt64) t.i64 = {4, 9};
  EXPECT_NO_THROW(session.run(inputs));
}

TEST_P(OtherBackend, Fp16WeightsAgreeWithTheCpu) {
  for (const char* name : {"golden/dcgan_digits_generator.fp16", "golden/g_stride4_k7_rect.fp16", "golden/cgan_digits_generator.fp16"}) {
    const auto model = testing::test_model(name);
    const auto inputs = inputs_for(*model, 2, 5);
    SessionOptions cpu_options;
    cpu_options.batch = 2;
    const auto want = Session(model, cpu_options).run(inputs);
    const auto got = Session(model, options(2, ConvTranspose2DAlgo::kSplit)).run(inputs);
    EXPECT_LE(max_abs_diff(got[0].f32, want[0].f32), 1e-4f) << name;
  }
}

// --precision tf32: operands rounded to 10-bit mantissas on the tensor cores. The figure below
// is the accuracy docs/cuda.md states for it.
TEST_P(OtherBackend, Tf32StaysWithinOneHundredthOfTheCpu) {
  // winograd_wide: a 3x3 convolution of 148 channels, on the pipelined TF32 kernel.
  for (const char* name : {"built/dcgan64_generator", "built/huge2_dcgan", "golden/dcgan_digits_generator", "built/winograd_wide"}) {
    const auto model = testing::test_model(name);
    const auto inputs = inputs_for(*model, 16, 5);
    SessionOptions cpu_options;
    cpu_options.batch = 16;
    const auto want = Session(model, cpu_options).run(inputs);
    SessionOptions o = options(16, ConvTranspose2DAlgo::kSplit);
    o.precision = Precision::kTf32;
    const auto got = Session(model, o).run(inputs);
    const float err = max_abs_diff(got[0].f32, want[0].f32);
    EXPECT_LE(err, 1e-2f) << name;
    std::cout << name << ": TF32 max |diff| against the CPU " << err << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, OtherBackend, ::testing::Values(Backend::kCuda),
                         [](const ::testing::TestParamInfo<Backend>& info) { return info.param == Backend::kCuda ? "cuda" : "cpu"; });

// The CUDA backend's weights: copied to the device by default on a discrete GPU,
// mapped from the model file where the GPU shares host memory (forced here with
// EDGEGAN_CUDA_WEIGHTS=map): the same outputs, bit for bit, and no device copy.
TEST(CudaBackend, MappedWeightsGiveTheSameOutputsWithoutADeviceCopy) {
  std::string why;
  if (!backend_available(Backend::kCuda, &why)) GTEST_SKIP() << why;
  const auto model = Model::load((testing::source_dir() / "models/dcgan_digits/generator.egan").string());
  SessionOptions o;
  o.backend = Backend::kCuda;
  o.batch = 4;
  const auto inputs = inputs_for(*model, 4, 2);
  ::setenv("EDGEGAN_CUDA_WEIGHTS", "copy", 1);
  Session copied(model, o);
  ::setenv("EDGEGAN_CUDA_WEIGHTS", "map", 1);
  Session mapped(model, o);
  ::unsetenv("EDGEGAN_CUDA_WEIGHTS");
  EXPECT_EQ(copied.weight_placement(), "copied to the device");
  EXPECT_EQ(mapped.weight_placement(), "mapped from the model file");
  EXPECT_EQ(copied.run(inputs)[0].f32, mapped.run(inputs)[0].f32);
  EXPECT_LT(mapped.session_weight_bytes() + model->weight_bytes() / 2, copied.session_weight_bytes());
}

}  // namespace
}  // namespace edgegan

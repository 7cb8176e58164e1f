// The Vulkan backend on whatever Vulkan device runs here (lavapipe in CI, two threads,
// the validation layer on: see tests/CMakeLists.txt): the shipped DCGAN and cGAN and
// every test model agree with the CPU within 1e-4; the memory
// report equals what the session allocates; a bad label or device index is one line.
// Skipped, with the loader's or driver's reason, where no Vulkan device exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <utility>
#include <vector>

#include "edgegan/edgegan.h"
#include "edgegan/report.h"
#include "engine/backend/backend.h"
#include "tests/test_models/test_models.h"
#include "tests/test_util.h"
#include "tests/vulkan_test_env.h"

namespace edgegan {
namespace {

namespace fs = std::filesystem;
using edgegan::testing::max_abs_diff;

std::vector<std::string> every_model() {
  std::vector<std::string> paths;
  for (const auto& e : fs::recursive_directory_iterator(testing::test_models_dir()))
    if (e.path().extension() == ".egan") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string shipped(const char* name) { return (testing::source_dir() / "models" / name).string(); }

std::vector<Tensor> inputs_for(const Model& model, int batch, uint64_t seed) {
  std::vector<Tensor> inputs;
  for (const InputInfo& info : model.inputs()) {
    Tensor t;
    t.name = info.name, t.dtype = info.dtype, t.layout = info.layout, t.shape = info.dims;
    t.shape[0] = batch;
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    if (info.dtype == DType::kInt64) {
      for (int64_t i = 0; i < count; ++i) t.i64.push_back(i % std::max<int64_t>(1, info.label_count));
    } else {
      t.f32 = normal_noise(static_cast<size_t>(count), seed);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

class VulkanBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::kVulkanTestEnvironment);  // set before main() (see the header)
    std::string why;
    if (!backend_available(Backend::kVulkan, &why)) GTEST_SKIP() << why;
  }
  void TearDown() override { EXPECT_EQ(vulkan_validation_messages(), 0) << "the Vulkan validation layer reported the messages above"; }
  static SessionOptions options(int batch) {
    SessionOptions o;
    o.backend = Backend::kVulkan;
    o.batch = batch;
    o.threads = 2;
    return o;
  }
  // The model's outputs on Vulkan against the CPU's, within 1e-4 x max(1, max|y|).
  static void expect_agreement(const std::shared_ptr<const Model>& model, int batch) {
    const auto inputs = inputs_for(*model, batch, 7);
    SessionOptions cpu;
    cpu.threads = 2;
    cpu.batch = batch;
    const auto want = Session(model, cpu).run(inputs);
    Session session(model, options(batch));
    const auto got = session.run(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].shape, want[i].shape);
      float scale = 1.f;
      for (float y : want[i].f32) scale = std::max(scale, std::fabs(y));
      EXPECT_LE(max_abs_diff(got[i].f32, want[i].f32), 1e-4f * scale) << got[i].name;
    }
    EXPECT_EQ(session.run(inputs)[0].f32, got[0].f32) << "a second run differs";
  }
};

TEST_F(VulkanBackend, RunsTheShippedDcganAndCgan) {
  for (const char* name : {"dcgan_digits/generator.egan", "dcgan_digits/discriminator.egan", "cgan_digits/generator.egan", "cgan_digits/discriminator.egan"}) {
    SCOPED_TRACE(name);
    const auto model = Model::load(shipped(name));
    ASSERT_EQ(testing::backend_refusal(model, Backend::kVulkan), "");
    for (int batch : {1, 3}) expect_agreement(model, batch);
  }
}

// Every test model: none is refused (every op kind has its kernel), and each agrees
// with the CPU. The direct kernels on lavapipe run about 10^7 multiply-accumulates a
// second on two threads, so the seven built benchmark models past 3 x 10^7 per run
// (the HUGE2 and DCGAN-64 ones, the Winograd stress cases: 5.8 x 10^9 of the suite's
// 6.3 x 10^9) are left out here; their op kinds and shapes' families run in the others.
TEST_F(VulkanBackend, AgreesWithTheCpuOnEveryModelItTakes) {
  int taken = 0, left_out = 0;
  for (const std::string& path : every_model()) {
    const auto model = Model::load(path);
    const std::string why = testing::backend_refusal(model, Backend::kVulkan);
    if (!why.empty()) {
      ADD_FAILURE() << path << ": " << why;
      continue;
    }
    if (memory_report(model, options(2)).totals.macs > 30'000'000) {
      ++left_out;
      continue;
    }
    SCOPED_TRACE(path);
    ++taken;
    expect_agreement(model, 2);
  }
  std::cout << "Vulkan: " << taken << " test models run, " << left_out << " left out for time\n";
  EXPECT_GE(taken, 150);
  EXPECT_LE(left_out, 7);
}

TEST_F(VulkanBackend, Fp16WeightsAgreeWithTheCpu) {
  for (const char* name : {"golden/dcgan_digits_generator.fp16", "golden/g_stride4_k7_rect.fp16", "golden/cgan_digits_generator.fp16",
                           "golden/conv_transpose2d_grouped.fp16"}) {
    SCOPED_TRACE(name);
    expect_agreement(testing::test_model(name), 2);
  }
}

TEST_F(VulkanBackend, ReportEqualsWhatTheSessionAllocated) {
  for (const char* name : {"cgan_digits/generator.egan", "dcgan_digits/generator.egan"})
    for (int batch : {1, 16}) {
      SCOPED_TRACE(std::string(name) + " batch " + std::to_string(batch));
      const auto model = Model::load(shipped(name));
      const MemoryReport report = memory_report(model, options(batch));
      Session session(model, options(batch));
      EXPECT_EQ(report.backend, "vulkan");
      EXPECT_EQ(session.measured_allocation_bytes(), report.totals.session_bytes);
      EXPECT_EQ(session.arena_bytes(), report.totals.arena_bytes);
      session.run(inputs_for(*model, batch, 1));
      EXPECT_EQ(session.measured_allocation_bytes(), report.totals.session_bytes) << "a run allocated";
    }
}

// An fp16 session (half storage): the report still equals what the session allocates,
// and both its arena and its weight uploads are about half the fp32 session's.
TEST_F(VulkanBackend, Fp16ReportEqualsWhatTheSessionAllocatedAndHalves) {
  std::string why;
  if (!backend_runs_precision(Backend::kVulkan, Precision::kFp16, &why)) GTEST_SKIP() << why;
  for (const char* name : {"cgan_digits/generator.egan", "dcgan_digits/generator.egan"}) {
    SCOPED_TRACE(name);
    const auto model = Model::load(shipped(name));
    SessionOptions half = options(4);
    half.precision = Precision::kFp16;
    const MemoryReport report = memory_report(model, half), full = memory_report(model, options(4));
    Session session(model, half);
    EXPECT_EQ(session.measured_allocation_bytes(), report.totals.session_bytes);
    EXPECT_EQ(session.arena_bytes(), report.totals.arena_bytes);
    session.run(inputs_for(*model, 4, 1));
    EXPECT_EQ(session.measured_allocation_bytes(), report.totals.session_bytes) << "a run allocated";
    EXPECT_LE(report.totals.arena_bytes, full.totals.arena_bytes * 6 / 10);
    EXPECT_LE(report.totals.session_weight_bytes, full.totals.session_weight_bytes * 6 / 10);
  }
}

// fp16 storage against the CPU's fp32, within 2e-2 x max(1, max|y|): shipped models
// (fp32 weights, rounded when uploaded) and fp16-weight files (halves uploaded as they are).
TEST_F(VulkanBackend, Fp16StorageAgreesWithTheCpu) {
  std::string why;
  if (!backend_runs_precision(Backend::kVulkan, Precision::kFp16, &why)) GTEST_SKIP() << why;
  const std::vector<std::pair<std::string, std::shared_ptr<const Model>>> models = {
      {"dcgan generator", Model::load(shipped("dcgan_digits/generator.egan"))},
      {"cgan discriminator", Model::load(shipped("cgan_digits/discriminator.egan"))},
      {"cgan generator, fp16 weights", testing::test_model("golden/cgan_digits_generator.fp16")},
      {"grouped transposed convolution, fp16 weights", testing::test_model("golden/conv_transpose2d_grouped.fp16")}};
  for (const auto& [name, model] : models) {
    SCOPED_TRACE(name);
    const auto inputs = inputs_for(*model, 2, 7);
    SessionOptions cpu;
    cpu.threads = 2;
    cpu.batch = 2;
    SessionOptions half = options(2);
    half.precision = Precision::kFp16;
    const auto want = Session(model, cpu).run(inputs);
    const auto got = Session(model, half).run(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      float scale = 1.f;
      for (float y : want[i].f32) scale = std::max(scale, std::fabs(y));
      EXPECT_LE(max_abs_diff(got[i].f32, want[i].f32), 2e-2f * scale) << got[i].name;
    }
  }
}

TEST_F(VulkanBackend, LabelOutsideTheTableIsRefusedByName) {
  const auto model = Model::load(shipped("cgan_digits/generator.egan"));
  Session session(model, options(2));
  auto inputs = inputs_for(*model, 2, 3);
  for (Tensor& t : inputs)
    if (t.dtype == DType::kInt64) t.i64 = {4, 10};
  try {
    session.run(inputs);
    FAIL() << "label 10 ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("value 10 at position 1 is outside 0..9"), std::string::npos) << e.what();
  }
  for (Tensor& t : inputs)
    if (t.dtype == DType::kInt64) t.i64 = {4, 9};
  EXPECT_NO_THROW(session.run(inputs));
}

TEST_F(VulkanBackend, AMissingDeviceIsOneLine) {
  const auto model = Model::load(shipped("dcgan_digits/generator.egan"));
  SessionOptions o = options(1);
  o.device = 99;
  try {
    Session session(model, o);
    FAIL() << "device 99 was taken";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("session: the Vulkan backend has no usable device: device 99 does not exist"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace edgegan

// SessionOptions::precision: its names, the CPU backend's fp16 (half storage through the
// adapter) and refusal of tf32 (one line naming the backend), the half-size activations
// an fp16 plan counts, and a layer past the half range kept as fp32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "edgegan/edgegan.h"
#include "edgegan/report.h"
#include "engine/backend/backend.h"
#include "engine/session_plan.h"
#include "tests/test_models/test_models.h"

namespace edgegan {
namespace {

TEST(Precision, NamesRoundTripAndUnknownOnesAreRefused) {
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16}) EXPECT_EQ(precision_from_string(to_string(p)), p);
  try {
    precision_from_string("bf16");
    FAIL() << "bf16 was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown precision 'bf16' (expected fp32, tf32 or fp16)");
  }
}

// Inputs of every kind for `model` at `batch`: floats all `value`, labels 0.. in turn.
std::vector<Tensor> filled_inputs(const Model& model, int batch, float value) {
  std::vector<Tensor> inputs;
  for (const InputInfo& info : model.inputs()) {
    Tensor t;
    t.name = info.name, t.dtype = info.dtype, t.layout = info.layout, t.shape = info.dims;
    t.shape[0] = batch;
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    for (int64_t i = 0; i < count; ++i) {
      if (info.dtype == DType::kInt64) {
        t.i64.push_back(i % std::max<int64_t>(1, info.label_count));
      } else {
        t.f32.push_back(value * static_cast<float>((i % 7) - 3) / 3.f);
      }
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

TEST(Precision, TheCpuBackendRunsFp32AndFp16AndRefusesTf32NamingItself) {
  const auto model = testing::test_model("golden/dcgan_digits_generator");
  SessionOptions o;
  EXPECT_EQ(Session(model, o).options().precision, Precision::kFp32);
  EXPECT_TRUE(backend_runs_precision(Backend::kCpu, Precision::kFp32));
  EXPECT_TRUE(backend_runs_precision(Backend::kCpu, Precision::kFp16));
  std::string why;
  EXPECT_FALSE(backend_runs_precision(Backend::kCpu, Precision::kTf32, &why));
  const std::string expected = "the cpu backend runs fp32 and fp16, not tf32 (tf32 needs --backend cuda)";
  EXPECT_EQ(why, expected);
  o.precision = Precision::kTf32;
  try {
    Session session(model, o);
    FAIL() << "tf32 ran on the cpu";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "session: " + expected);
  }
  try {
    memory_report(model, o);
    FAIL() << "a tf32 report was planned for the cpu";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "report: " + expected);
  }
  o.precision = Precision::kFp32;
  EXPECT_EQ(memory_report(model, o).precision, "fp32");
  o.precision = Precision::kFp16;
  EXPECT_EQ(memory_report(model, o).precision, "fp16");
  EXPECT_EQ(Session(model, o).options().precision, Precision::kFp16);
}

// The cpu's fp16 session: the report equals what it allocates, a run allocates nothing,
// the float activations are halves and the adapter's float copies are workspace, and
// its outputs are near the fp32 session's (the goldens check every case against PyTorch).
TEST(Precision, ACpuFp16SessionIsReportedAsItAllocatesAndAgreesWithFp32) {
  for (const char* name : {"golden/dcgan_digits_generator", "golden/cgan_digits_generator", "golden/cgan_digits_generator.fp16"}) {
    SCOPED_TRACE(name);
    const auto model = testing::test_model(name);
    SessionOptions full;
    full.batch = 3;
    full.threads = 2;
    SessionOptions half = full;
    half.precision = Precision::kFp16;
    const MemoryReport report = memory_report(model, half), full_report = memory_report(model, full);
    EXPECT_EQ(report.precision, "fp16");
    Session session(model, half);
    EXPECT_EQ(session.measured_allocation_bytes(), report.totals.session_bytes);
    EXPECT_EQ(session.arena_bytes(), report.totals.arena_bytes);
    const auto inputs = filled_inputs(*model, 3, 1.f);
    const auto got = session.run(inputs);
    EXPECT_EQ(session.measured_allocation_bytes(), report.totals.session_bytes) << "a run allocated";
    bool widened = false;
    ASSERT_EQ(report.layers.size(), full_report.layers.size());
    for (size_t k = 0; k < report.layers.size(); ++k) {
      const LayerMemory &l = report.layers[k], &f = full_report.layers[k];
      EXPECT_EQ(l.output_bytes * 2, f.output_bytes) << l.name;
      widened |= l.workspace_bytes >= f.workspace_bytes + f.output_bytes;  // the output's float copy
    }
    EXPECT_TRUE(widened) << "no layer's workspace holds its float copies";
    const auto want = Session(model, full).run(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      float scale = 1.f, diff = 0.f;
      for (size_t k = 0; k < want[i].f32.size(); ++k) {
        scale = std::max(scale, std::fabs(want[i].f32[k]));
        diff = std::max(diff, std::fabs(got[i].f32[k] - want[i].f32[k]));
      }
      EXPECT_LE(diff, 2e-2f * scale) << got[i].name;
      EXPECT_GT(diff, 0.f) << "fp16 gave fp32's bits exactly: was it run at fp16?";
    }
  }
}

// A layer whose values pass 65504 is not handed on as an infinity (a picture of saturated
// pixels): its output, and then each later one that overflows, is kept as fp32, one line
// naming each, and the run agrees with the fp32 session; later runs allocate nothing.
TEST(Precision, AnFp16OverflowKeepsThoseLayersFp32NamingThem) {
  const auto model = testing::test_model("golden/dcgan_digits_generator");
  SessionOptions o;
  o.precision = Precision::kFp16;
  std::vector<std::string> notices;  // through the option, not stderr
  o.on_notice = [&](const std::string& line) { notices.push_back(line); };
  Session session(model, o);
  const auto inputs = filled_inputs(*model, 1, 60000.f);  // halves as inputs; the first layer's sums pass the range
  ::testing::internal::CaptureStderr();
  const auto got = session.run(inputs);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "with on_notice set, nothing goes to stderr";
  ASSERT_FALSE(notices.empty());
  for (const std::string& line : notices) {
    EXPECT_NE(line.find("(ConvTranspose2D): its output is past the half range at fp16; kept as fp32 from now on"), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
  o.on_notice = nullptr;
  const uint64_t allocated = session.measured_allocation_bytes();
  EXPECT_NO_THROW(session.run(filled_inputs(*model, 1, 1.f)));
  EXPECT_EQ(session.measured_allocation_bytes(), allocated) << "a later run allocated";
  o.precision = Precision::kFp32;
  const auto want = Session(model, o).run(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    float scale = 1.f, diff = 0.f;
    for (size_t k = 0; k < want[i].f32.size(); ++k) {
      scale = std::max(scale, std::fabs(want[i].f32[k]));
      diff = std::max(diff, std::fabs(got[i].f32[k] - want[i].f32[k]));
    }
    EXPECT_LE(diff, 2e-2f * scale) << got[i].name;
  }
}

// A training plan (a Trainer's) is fp32 only: backward kernels read and write floats.
TEST(Precision, ATrainingPlanRefusesFp16InOneLine) {
  const auto model = testing::test_model("golden/dcgan_digits_generator");
  const Model::Impl& m = model->impl();
  PlanOptions o;
  o.training = true;
  o.precision = Precision::kFp16;
  try {
    build_session_plan(m, compute_backend(Backend::kCpu, "test"), o, m, nullptr);
    FAIL() << "an fp16 training plan was built";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "trainer: training runs fp32 only, not fp16");
  }
}

TEST(Precision, Fp16PlansHalfSizeFloatActivationsAndKeepsInt64) {
  TensorDesc f{.name = "x", .dtype = DType::kFloat32, .layout = Layout::kNHWC, .dims = {-1, 4, 4, 3}, .per_sample = 48};
  TensorDesc i{.name = "label", .dtype = DType::kInt64, .layout = Layout::kRowMajor, .dims = {-1}, .per_sample = 1};
  EXPECT_EQ(tensor_bytes(f, 2, Precision::kFp32), 2u * 48 * 4);
  EXPECT_EQ(tensor_bytes(f, 2, Precision::kTf32), 2u * 48 * 4);
  EXPECT_EQ(tensor_bytes(f, 2, Precision::kFp16), 2u * 48 * 2);
  EXPECT_EQ(tensor_bytes(i, 2, Precision::kFp16), 2u * 8);
}

// The arena of a whole plan: a backend that takes fp16 (the CPU's kernels, planned
// only) plans a smaller arena at fp16 than at fp32 for the same model, and every
// float tensor's buffer is half the size.
class Fp16PlanningBackend final : public ComputeBackend {
 public:
  Fp16PlanningBackend() : cpu_(compute_backend(Backend::kCpu, "test")) {}
  Backend kind() const override { return Backend::kCuda; }
  const char* name() const override { return "planning"; }
  bool supports(const KernelArgs&, std::string*) const override { return true; }
  // The fp32 kernels as they are (a GPU backend's own kernels read halves), without the cpu's adapter.
  std::unique_ptr<OpKernel> create_kernel(const OpDef& op, const KernelArgs& args) const override { return op.create_cpu_kernel(args); }
  std::unique_ptr<DeviceBuffer> allocate(uint64_t bytes, MemoryTracker& tracker) const override { return cpu_.allocate(bytes, tracker); }
  std::unique_ptr<BackendStream> open_stream() const override { return cpu_.open_stream(); }
  std::string weight_placement() const override { return cpu_.weight_placement(); }
  std::string precision_refusal(Precision, bool planning) const override { return planning ? "" : "planning only"; }

 private:
  const ComputeBackend& cpu_;
};

TEST(Precision, AnFp16PlanHalvesTheFloatActivationBuffers) {
  const auto model = testing::test_model("golden/dcgan_digits_generator");
  const Model::Impl& m = model->impl();
  const Fp16PlanningBackend backend;
  EXPECT_NO_THROW(check_precision(backend, Precision::kFp16, /*planning=*/true, "report"));
  EXPECT_THROW(check_precision(backend, Precision::kFp16, /*planning=*/false, "session"), Error);
  PlanOptions o;
  o.batch = 4;
  const SessionPlan full = build_session_plan(m, backend, o, m, nullptr);
  o.precision = Precision::kFp16;
  const SessionPlan half = build_session_plan(m, backend, o, m, nullptr);
  ASSERT_EQ(full.tensor_buffer.size(), half.tensor_buffer.size());
  for (size_t t = 0; t < full.tensor_buffer.size(); ++t) {
    if (full.tensor_buffer[t] < 0 || m.tensors[t].dtype != DType::kFloat32) continue;
    const uint64_t f = full.buffers[static_cast<size_t>(full.tensor_buffer[t])].size;
    const uint64_t h = half.buffers[static_cast<size_t>(half.tensor_buffer[t])].size;
    EXPECT_EQ(h * 2, f) << m.tensors[t].name;
  }
  EXPECT_LT(half.arena_bytes, full.arena_bytes);
}

}  // namespace
}  // namespace edgegan

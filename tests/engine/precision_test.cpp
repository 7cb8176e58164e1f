// SessionOptions::precision: its names, the CPU backend's refusal of what it does not
// run (one line naming the backend), and the half-size activations an fp16 plan counts.
#include <gtest/gtest.h>

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

TEST(Precision, TheCpuBackendRunsFp32AndRefusesTheOthersNamingItself) {
  const auto model = testing::test_model("golden/dcgan_digits_generator");
  SessionOptions o;
  EXPECT_EQ(Session(model, o).options().precision, Precision::kFp32);
  EXPECT_TRUE(backend_runs_precision(Backend::kCpu, Precision::kFp32));
  for (Precision p : {Precision::kTf32, Precision::kFp16}) {
    std::string why;
    EXPECT_FALSE(backend_runs_precision(Backend::kCpu, p, &why));
    const std::string expected = std::string("the cpu backend runs fp32 only, not ") + to_string(p) + " (" + to_string(p) + " needs --backend " +
                                 (p == Precision::kFp16 ? "vulkan" : "cuda") + ")";
    EXPECT_EQ(why, expected);
    o.precision = p;
    try {
      Session session(model, o);
      FAIL() << to_string(p) << " ran on the cpu";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "session: " + expected);
    }
    try {
      memory_report(model, o);
      FAIL() << "a " << to_string(p) << " report was planned for the cpu";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "report: " + expected);
    }
  }
  o.precision = Precision::kFp32;
  EXPECT_EQ(memory_report(model, o).precision, "fp32");
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
  std::unique_ptr<OpKernel> create_kernel(const OpDef& op, const KernelArgs& args) const override { return cpu_.create_kernel(op, args); }
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

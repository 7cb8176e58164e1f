// A backend's supports() sees each op as the model has it (KernelArgs: attributes, the
// model's tensor shapes, the batch), and the session plan refuses a model with an op its
// backend cannot run, naming the op and the backend's reason, before anything is
// allocated. The CUDA backend refuses shapes past its kernels' limits this way; that
// path needs a GPU, so a stand-in backend with a shape limit checks the plan's side here.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/session_plan.h"
#include "tests/test_models/test_models.h"

namespace edgegan {
namespace {

// The CPU backend, refusing every op whose output holds more than `max_floats` floats
// at the plan's batch.
class OutputLimitedBackend final : public ComputeBackend {
 public:
  explicit OutputLimitedBackend(int64_t max_floats) : cpu_(compute_backend(Backend::kCpu, "test")), max_floats_(max_floats) {}
  Backend kind() const override { return Backend::kCpu; }
  const char* name() const override { return "limited"; }
  bool supports(const KernelArgs& args, std::string* why) const override {
    const int64_t floats = args.batch * args.tensor(op_def(args.op).output(args.op)).per_sample;
    if (floats <= max_floats_) return true;
    *why = "an output of " + std::to_string(floats) + " floats, over " + std::to_string(max_floats_);
    return false;
  }
  std::unique_ptr<OpKernel> create_kernel(const OpDef& op, const KernelArgs& args) const override { return cpu_.create_kernel(op, args); }
  std::unique_ptr<DeviceBuffer> allocate(uint64_t bytes, MemoryTracker& tracker) const override { return cpu_.allocate(bytes, tracker); }
  std::unique_ptr<BackendStream> open_stream() const override { return cpu_.open_stream(); }
  std::string weight_placement() const override { return cpu_.weight_placement(); }
  std::string precision_refusal(Precision precision, bool planning) const override { return cpu_.precision_refusal(precision, planning); }

 private:
  const ComputeBackend& cpu_;
  int64_t max_floats_;
};

TEST(BackendRefusal, SupportsSeesTheShapesAndTheSessionNamesTheOp) {
  const auto model = testing::test_model("built/huge2_dcgan");
  const Model::Impl& m = model->impl();
  auto output_floats = [&](const schema::Op& op) { return m.tensors[static_cast<size_t>(op_def(op).output(op))].per_sample; };
  // The largest output of one sample: batch 1 fits the limit; at batch 2 the first op
  // whose output is over half of it is refused.
  int64_t largest = 0;
  for (const schema::Op* op : *m.root->ops()) largest = std::max<int64_t>(largest, output_floats(*op));
  int first = 0;
  while (2 * output_floats(*m.root->ops()->Get(static_cast<uint32_t>(first))) <= largest) ++first;
  const schema::Op& refused = *m.root->ops()->Get(static_cast<uint32_t>(first));

  const OutputLimitedBackend backend(largest);
  PlanOptions options;
  EXPECT_NO_THROW(build_session_plan(m, backend, options, m, nullptr));
  options.batch = 2;
  try {
    build_session_plan(m, backend, options, m, nullptr);
    FAIL() << "a plan past the backend's limit was built";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "session: the limited backend cannot run " + op_label(refused, first) + " (" + op_def(refused).name() +
                                         "): an output of " + std::to_string(2 * output_floats(refused)) + " floats, over " + std::to_string(largest));
  }
}

}  // namespace
}  // namespace edgegan

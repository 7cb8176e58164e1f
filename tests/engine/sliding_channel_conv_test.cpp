// SlidingChannelConv in the engine: the converter lowers both torch channel-stack
// forms to it (and a gather that is not sliding windows to something else), a hostile
// op is refused naming the defect, the memory report shows the channel stack it never
// writes, and training (what `finetune` runs) lowers the DW+SCC generator's loss.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "edgegan/edgegan.h"
#include "edgegan/report.h"
#include "edgegan/trainer.h"
#include "egan_generated.h"
#include "engine/model_integrity.h"
#include "tests/engine/mse_steps.h"
#include "tests/test_models/test_models.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

std::shared_ptr<const Model> golden_model(const std::string& name) { return testing::test_model("golden/" + name); }

int count_kind(const Model& m, const std::string& kind) {
  int n = 0;
  for (const OpInfo& op : m.ops()) n += op.kind == kind;
  return n;
}

TEST(SlidingChannelConv, BothExportFormsConvertToIt) {
  for (const char* name : {"scc_gather", "scc_slices"}) {
    SCOPED_TRACE(name);
    const auto m = golden_model(name);
    EXPECT_EQ(count_kind(*m, "SlidingChannelConv"), 3);
    EXPECT_EQ(m->ops().size(), 3u);  // no gather, slice, concat or grouped conv left; BN and activations fused
  }
  const auto g = golden_model("scc_dw_generator");
  EXPECT_EQ(count_kind(*g, "SlidingChannelConv"), 2);
  EXPECT_EQ(count_kind(*g, "Slice") + count_kind(*g, "Concat"), 0);
  // Not sliding windows: Slices + Concat + grouped Conv2D, still matching PyTorch (golden test).
  const auto other = golden_model("scc_gather_not_sliding");
  EXPECT_EQ(count_kind(*other, "SlidingChannelConv"), 0);
  EXPECT_EQ(count_kind(*other, "Conv2D"), 2);
  EXPECT_GT(count_kind(*other, "Concat"), 0);
}

// scc_gather with its first SlidingChannelConv (16 -> 24, window 4, start stride 2) changed.
std::vector<uint8_t> with_scc(const std::function<void(schema::ModelT&, schema::SlidingChannelConvT&)>& mutate) {
  static const std::vector<uint8_t> full = testing::test_model_bytes("golden/scc_gather");
  const uint32_t fb_size = flatbuffers::ReadScalar<uint32_t>(full.data());
  const size_t data_begin = (4 + fb_size + 63) / 64 * 64;
  std::unique_ptr<schema::ModelT> m(schema::GetSizePrefixedModel(full.data())->UnPack());
  schema::SlidingChannelConvT* scc = nullptr;
  for (auto& op : m->ops)
    if (auto* s = op->kind.AsSlidingChannelConv(); s && !scc) scc = s;
  if (!scc || scc->in_channels != 16 || scc->window != 4) throw std::runtime_error("unexpected first SlidingChannelConv");
  mutate(*m, *scc);
  flatbuffers::FlatBufferBuilder b;
  schema::FinishSizePrefixedModelBuffer(b, schema::Model::Pack(b, m.get()));
  std::vector<uint8_t> out(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  out.resize((out.size() + 63) / 64 * 64, 0);
  out.insert(out.end(), full.begin() + static_cast<long>(data_begin), full.end() - kTrailerSize);
  seal_model_file(out);
  return out;
}

std::string load_error(const std::vector<uint8_t>& bytes) {
  try {
    Model::from_bytes(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SlidingChannelConv, RejectsHostileOps) {
  using Mutate = std::function<void(schema::ModelT&, schema::SlidingChannelConvT&)>;
  const std::vector<std::tuple<const char*, Mutate, const char*>> cases = {
      {"untouched", [](schema::ModelT&, schema::SlidingChannelConvT&) {}, ""},
      {"zero window", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.window = 0; }, "window"},
      {"window wider than the input", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.window = 17; }, "window"},
      {"zero start stride", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.start_stride = 0; }, "start_stride"},
      {"start stride past the channels", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.start_stride = 99; }, "start_stride"},
      {"no window table", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.starts.clear(); }, "starts"},
      {"table one short", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.starts.pop_back(); }, "starts, one period"},
      {"table of another stride", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.start_stride = 4; }, "starts, one period"},
      {"start out of range", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.starts[1] = 40; }, "window start 1 is 40"},
      {"in_channels mismatch", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.in_channels = 8; }, "channels"},
      {"weights of another size", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.window = 3; s.start_stride = 3; s.starts = {0, 3, 6, 9, 12, 15, 2, 5, 8, 11, 14, 1, 4, 7, 10, 13}; }, "weights"},
      {"weights index out of range", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.weights = 999; }, "out of range"},
      {"kernel too large", [](schema::ModelT&, schema::SlidingChannelConvT& s) { s.kernel_h = 0; }, "kernel_h"},
  };
  for (const auto& [name, mutate, expected] : cases) {
    SCOPED_TRACE(name);
    const std::string error = load_error(with_scc(mutate));
    if (std::string(expected).empty()) {
      EXPECT_EQ(error, "");
    } else {
      EXPECT_NE(error.find(expected), std::string::npos) << "got: '" << error << "'";
      EXPECT_NE(error.find("SlidingChannelConv"), std::string::npos) << error;
    }
  }
}

TEST(SlidingChannelConv, MemoryReportShowsTheChannelStackItNeverWrites) {
  const auto m = golden_model("scc_dw_generator");
  const MemoryReport r = memory_report(m, {.threads = 1, .batch = 4});
  int seen = 0;
  for (const LayerMemory& l : r.layers) {
    if (l.kind != "SlidingChannelConv") {
      EXPECT_EQ(l.unmaterialised_bytes, 0u) << l.kind;
      continue;
    }
    ++seen;
    // Stage 1: 8x8 map, 32 outputs x window 8; stage 2: 16x16, 16 outputs x window 16.
    const uint64_t stack = seen == 1 ? 4ull * 8 * 8 * 32 * 8 * 4 : 4ull * 16 * 16 * 16 * 16 * 4;
    EXPECT_EQ(l.unmaterialised_bytes, stack);
    EXPECT_LT(l.workspace_bytes * 8, stack);  // per-thread tiles, not a stack
  }
  EXPECT_EQ(seen, 2);
  EXPECT_NE(r.to_table().find("channel stack"), std::string::npos);
  EXPECT_EQ(MemoryReport::from_json(r.to_json()).layers[3].unmaterialised_bytes, r.layers[3].unmaterialised_bytes);
}

// What `finetune` does to a generator: Adam steps on a reconstruction loss.
TEST(SlidingChannelConv, TrainingLowersTheDwSccGeneratorsLoss) {
  const auto model = golden_model("scc_dw_generator");
  std::mt19937 rng(5);
  Trainer trainer(model, {.batch = 4, .threads = 2, .optimizer = Optimizer::kAdam, .learning_rate = 3e-3f, .beta1 = 0.9f});
  const InputInfo& in = model->inputs()[0];
  Tensor z{in.name, in.dtype, in.layout, in.dims, {}, {}};
  z.shape[0] = 4;
  z.f32 = testing::random_floats(rng, static_cast<size_t>(z.elements()));
  const auto [first, last] = testing::mse_steps_towards(trainer, {z}, 30);
  EXPECT_LT(last, 0.5 * first);
}

}  // namespace
}  // namespace edgegan

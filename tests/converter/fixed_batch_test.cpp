// Graphs exported at a fixed batch (torch.onnx.export without dynamic axes): torch writes
// x.size(0) as the number it traced with, so `fc(z).view(z.size(0), C, H, W)` reaches the
// converter as a Reshape to [1, C, H, W]. The converted model still runs at any batch.
#include <gtest/gtest.h>

#include <random>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "tests/converter/convert_error.h"
#include "tests/converter/converted_model.h"
#include "tests/converter/onnx_builder.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::convert_error;
using testing::converted_model;
using testing::OnnxBuilder;
using testing::random_floats;

constexpr int64_t kLatent = 3, kChannels = 2, kSide = 2, kFeatures = kChannels * kSide * kSide;

// z [B, 3] -> Gemm (weights w [8, 3], transB) -> Reshape to `target` -> y [B, 2, 2, 2],
// every graph input declared with batch `export_batch` (0: a symbolic batch).
OnnxBuilder dense_view_graph(const std::vector<int64_t>& target, int64_t export_batch, const std::vector<float>& w) {
  OnnxBuilder b(17);
  b.input("z", {-1, kLatent}).output("y");
  if (export_batch > 0) b.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(export_batch);
  b.floats("w", {kFeatures, kLatent}, w).ints("target", {static_cast<int64_t>(target.size())}, target);
  OnnxBuilder::attr(b.node("Gemm", "fc", {"z", "w"}, {"h"}), "transB", int64_t{1});
  b.node("Reshape", "view", {"h", "target"}, {"y"});
  return b;
}

TEST(ConverterFixedBatch, AReshapeNamingTheExportBatchKeepsTheBatch) {
  std::mt19937 rng(7);
  const auto w = random_floats(rng, kFeatures * kLatent);
  for (const int64_t export_batch : {1, 2}) {
    SCOPED_TRACE(export_batch);
    const auto model = converted_model(dense_view_graph({export_batch, kChannels, kSide, kSide}, export_batch, w).bytes());
    for (const int batch : {1, 3}) {
      SCOPED_TRACE(batch);
      const auto z = random_floats(rng, static_cast<size_t>(batch * kLatent));
      Session s(model, {.batch = batch});
      const auto y = s.run({Tensor{"z", DType::kFloat32, Layout::kRowMajor, {batch, kLatent}, z, {}}})[0];
      ASSERT_EQ(y.shape[0], batch);
      ASSERT_EQ(y.f32.size(), static_cast<size_t>(batch * kFeatures));
      // The session hands the map back in NHWC: y[n][(i·2 + j)·2 + c] = h[n][(c·2 + i)·2 + j].
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t c = 0; c < kChannels; ++c)
          for (int64_t p = 0; p < kSide * kSide; ++p) {
            double h = 0;
            for (int64_t k = 0; k < kLatent; ++k) h += static_cast<double>(z[static_cast<size_t>(n * kLatent + k)]) * w[static_cast<size_t>((c * kSide * kSide + p) * kLatent + k)];
            EXPECT_NEAR(y.f32[static_cast<size_t>(n * kFeatures + p * kChannels + c)], h, 1e-5) << n << " " << c << " " << p;
          }
    }
  }
}

// The rule is only for a fixed-batch export: with a symbolic batch a target of 1 is what
// it says, and a batch other than 1 cannot be viewed as it; nor does it apply where the
// first entry is not the export batch.
TEST(ConverterFixedBatch, OtherwiseTheTargetIsTakenAsWritten) {
  std::mt19937 rng(8);
  const auto w = random_floats(rng, kFeatures * kLatent);
  const std::string symbolic = convert_error(dense_view_graph({1, kChannels, kSide, kSide}, 0, w).bytes());
  EXPECT_NE(symbolic.find("'view'"), std::string::npos) << symbolic;
  EXPECT_NE(symbolic.find("target shape holds"), std::string::npos) << symbolic;
  const std::string other = convert_error(dense_view_graph({2, kChannels, kSide, kSide / 2}, 1, w).bytes());
  EXPECT_NE(other.find("target shape holds"), std::string::npos) << other;
}

}  // namespace
}  // namespace edgegan

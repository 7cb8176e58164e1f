// Groups folded into the batch (converter/batch_folds.cpp): small graphs that view
// [N, 12, 4] tokens as [N·4, 3, 4] windows the way SwinIR's window_partition and its
// attention mask do, converted and run against plain loops; what cannot be unfolded is
// refused by name.
#include <gtest/gtest.h>

#include <cmath>
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

constexpr int64_t kWindows = 4, kRows = 3, kWidth = 4;

// x [N, 12, 4] -> w = x.view(-1, 3, 4) [4N, 3, 4] (rank 3, stored [N, 12, 4]) -> softmax
// over the last axis -> * c [1, 4] -> view(-1, 3, 2, 2) (rank 4, stored [N, 4, 3, 2, 2])
// -> permute(0, 2, 1, 3) -> view(b_ // 4, 4, 2, 3, 2) with b_ read by Shape (the mask's
// view) -> + mask [1, 4, 1, 1, 2] -> view(-1, 2, 3, 2) -> view(-1, 48) = y [N, 48].
OnnxBuilder windows_graph() {
  OnnxBuilder b(17);
  b.input("x", {-1, kWindows * kRows, kWidth}).output("y");
  b.ints("as_windows", {3}, {-1, kRows, kWidth}).ints("as_quads", {4}, {-1, kRows, 2, 2}).ints("back", {4}, {-1, 2, kRows, 2});
  b.ints("flat", {2}, {-1, kWindows * kRows * kWidth}).ints("four", {}, {kWindows}).ints("zero", {}, {0}).ints("axis0", {1}, {0});
  b.ints("rest", {4}, {kWindows, 2, kRows, 2});
  b.floats("c", {1, kWidth}, {0.5f, -1.f, 2.f, 1.5f});
  b.floats("mask", {1, kWindows, 1, 1, 2}, {0.f, -100.f, 1.f, 2.f, -3.f, 0.25f, 7.f, 0.f});
  b.node("Reshape", "partition", {"x", "as_windows"}, {"w"});
  OnnxBuilder::attr(b.node("Softmax", "softmax", {"w"}, {"s"}), "axis", int64_t{-1});
  b.node("Mul", "scale", {"s", "c"}, {"m"});
  b.node("Reshape", "quads", {"m", "as_quads"}, {"v"});
  OnnxBuilder::attr(b.node("Transpose", "permute", {"v"}, {"t"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  b.node("Shape", "shape", {"t"}, {"sh"});
  OnnxBuilder::attr(b.node("Gather", "b_", {"sh", "zero"}, {"groups"}), "axis", int64_t{0});
  b.node("Div", "samples", {"groups", "four"}, {"n"});
  b.node("Unsqueeze", "n1", {"n", "axis0"}, {"n1"});
  OnnxBuilder::attr(b.node("Concat", "target", {"n1", "rest"}, {"target"}), "axis", int64_t{0});
  b.node("Reshape", "mask_view", {"t", "target"}, {"u"});
  b.node("Add", "masked", {"u", "mask"}, {"a"});
  b.node("Reshape", "unmask_view", {"a", "back"}, {"r"});
  b.node("Reshape", "flatten", {"r", "flat"}, {"y"});
  return b;
}

TEST(ConverterBatchFolds, WindowsViewedIntoTheBatchMatchTheLoops) {
  const auto model = converted_model(windows_graph().bytes());
  const float c[kWidth] = {0.5f, -1.f, 2.f, 1.5f};
  const float mask[kWindows][2] = {{0.f, -100.f}, {1.f, 2.f}, {-3.f, 0.25f}, {7.f, 0.f}};
  std::mt19937 rng(53);
  for (int batch : {1, 3}) {
    SCOPED_TRACE(batch);
    const auto x = random_floats(rng, static_cast<size_t>(batch * kWindows * kRows * kWidth));
    Session s(model, {.batch = batch});
    const auto y = s.run({Tensor{"x", DType::kFloat32, Layout::kRowMajor, {batch, kWindows * kRows, kWidth}, x, {}}})[0];
    ASSERT_EQ(y.shape, (std::vector<int64_t>{batch, kWindows * kRows * kWidth}));
    // y[n][((j·2 + p)·3 + i)·2 + q] = softmax(x[n][j·3 + i])[p·2 + q] · c[p·2 + q] + mask[j][q]
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t j = 0; j < kWindows; ++j)
        for (int64_t i = 0; i < kRows; ++i) {
          const float* row = &x[static_cast<size_t>((n * kWindows * kRows + j * kRows + i) * kWidth)];
          double top = -1e300, sum = 0;
          for (int64_t e = 0; e < kWidth; ++e) top = std::max(top, static_cast<double>(row[e]));
          for (int64_t e = 0; e < kWidth; ++e) sum += std::exp(row[e] - top);
          for (int64_t p = 0; p < 2; ++p)
            for (int64_t q = 0; q < 2; ++q) {
              const double want = std::exp(row[p * 2 + q] - top) / sum * c[p * 2 + q] + mask[j][q];
              EXPECT_NEAR(y.f32[static_cast<size_t>(n * 48 + ((j * 2 + p) * kRows + i) * 2 + q)], want, 1e-5) << n << " " << j << " " << i;
            }
        }
  }
}

// A folded graph output, an op that cannot take a fold (a Conv), and an axis that is the
// fold (a Softmax over dimension 0's windows merged into tokens' dimension 1) are refused
// by name.
TEST(ConverterBatchFolds, WhatCannotBeUnfoldedIsRefusedByName) {
  {
    OnnxBuilder b(17);
    b.input("x", {-1, kWindows * kRows, kWidth}).output("w").ints("as_windows", {3}, {-1, kRows, kWidth});
    b.node("Reshape", "partition", {"x", "as_windows"}, {"w"});
    const std::string e = convert_error(b.bytes());
    EXPECT_NE(e.find("graph output 'w' holds the batch times 4"), std::string::npos) << e;
  }
  {
    OnnxBuilder b(17);
    // (The analysis gives a Conv's output the batch alone in dimension 0, so nothing after
    // it could view the windows back; the Conv is refused first.)
    b.input("x", {-1, kWindows * 2, kRows, kWidth}).output("y").ints("as_windows", {4}, {-1, 2, kRows, kWidth});
    b.floats("w", {2, 2, 1, 1}, {1.f, 2.f, 3.f, 4.f});
    b.node("Reshape", "partition", {"x", "as_windows"}, {"win"});
    b.node("Conv", "conv", {"win", "w"}, {"y"});
    const std::string e = convert_error(b.bytes());
    EXPECT_NE(e.find("node 'conv' (Conv): not supported on a tensor whose dimension 0 holds the batch times 4"), std::string::npos) << e;
  }
  {
    OnnxBuilder b(17);
    b.input("x", {-1, kWindows * kRows, kWidth}).output("y").ints("as_windows", {3}, {-1, kRows, kWidth});
    b.ints("back", {3}, {-1, kWindows * kRows, kWidth});
    b.node("Reshape", "partition", {"x", "as_windows"}, {"w"});
    OnnxBuilder::attr(b.node("Softmax", "softmax", {"w"}, {"s"}), "axis", int64_t{1});
    b.node("Reshape", "reverse", {"s", "back"}, {"y"});
    const std::string e = convert_error(b.bytes());
    EXPECT_NE(e.find("node 'softmax' (Softmax): works along dimension 1 of tokens"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace edgegan

// concat: the kernels against their definitions (and, for the backward, finite differences or the forward they invert).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/concat/concat.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(Concat, InterleavesChunksPerOuterIndex) {
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6};  // a: [2 x 2], b: [2 x 1]
  std::vector<float> y(6);
  concat(2, {a.data(), b.data()}, {2, 1}, y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 2, 5, 3, 4, 6}));
}

TEST(ConcatBackward, InvertsConcat) {
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6};
  const std::vector<int64_t> chunks = {2, 1};
  std::vector<float> y(6);
  concat(2, {a.data(), b.data()}, chunks, y.data());
  std::vector<float> da(4), dbv(2);
  float* outs[] = {da.data(), dbv.data()};
  concat_backward(2, y.data(), 2, chunks.data(), outs);
  EXPECT_EQ(da, a);
  EXPECT_EQ(dbv, b);
}

}  // namespace
}  // namespace edgegan::cpu

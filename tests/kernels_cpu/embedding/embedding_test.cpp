// embedding: the kernels against their definitions (and, for the backward, finite differences or the forward they invert).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/embedding/embedding.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(Embedding, CopiesRows) {
  const std::vector<float> table = {0, 1, 10, 11, 20, 21};
  const std::vector<int64_t> idx = {2, 0, 2};
  std::vector<float> y(6);
  embedding_lookup(3, idx.data(), 2, table.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{20, 21, 0, 1, 20, 21}));
}

TEST(EmbeddingBackward, ScatterAddsRepeatedIndices) {
  const std::vector<int64_t> idx = {2, 0, 2};
  const std::vector<float> dy = {1, 2, 10, 20, 100, 200};
  std::vector<float> dtable(3 * 2, NAN);
  embedding_backward(3, idx.data(), 3, 2, dy.data(), dtable.data());
  EXPECT_EQ(dtable, (std::vector<float>{10, 20, 0, 0, 101, 202}));
}

}  // namespace
}  // namespace edgegan::cpu

// transpose: the fast forward equals the reference over random ranks and permutations
// (neighbouring axes that merge and ones that do not) at 1 and 2 threads; the backward
// is its inverse (and adds when asked).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "kernels_cpu/transpose/transpose.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(Transpose, FastEqualsReferenceAndBackwardInverts) {
  std::mt19937 rng(59);
  for (int trial = 0; trial < 300; ++trial) {
    TransposeShape s;
    s.rank = uniform_int(rng, 1, 6);
    for (int k = 0; k < s.rank; ++k) s.in[k] = uniform_int(rng, 1, 7);
    std::iota(s.perm, s.perm + s.rank, 0);
    std::shuffle(s.perm + 1, s.perm + s.rank, rng);  // the batch stays first, as the engine's
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(transpose_elements(s)));
    std::vector<float> want(x.size());
    transpose_reference(s, x.data(), want.data());
    for (int threads : {1, 2}) {
      std::vector<float> got(x.size(), NAN), back(x.size(), NAN), acc(x.size(), 1.f);
      transpose(s, x.data(), got.data(), threads);
      ASSERT_EQ(got, want) << "trial " << trial;
      transpose_backward(s, got.data(), back.data(), false, threads);
      ASSERT_EQ(back, x);
      transpose_backward(s, got.data(), acc.data(), true, threads);
      for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(acc[i], 1.f + x[i]);
    }
  }
}

// Dims larger than the fast path's 16 x 16 tiles, partial tiles included, where the
// output's last axis is not the input's (attention's kᵀ): spans past the tiled path's
// threshold and below it.
TEST(Transpose, TiledPathEqualsReference) {
  std::mt19937 rng(61);
  for (int trial = 0; trial < 24; ++trial) {
    TransposeShape s;
    s.rank = uniform_int(rng, 2, 5);
    for (int k = 0; k < s.rank; ++k) s.in[k] = uniform_int(rng, 1, s.rank > 3 ? 24 : s.rank == 3 ? 70 : 200);
    do {
      std::iota(s.perm, s.perm + s.rank, 0);
      std::shuffle(s.perm + 1, s.perm + s.rank, rng);
    } while (s.rank > 2 && s.perm[s.rank - 1] == s.rank - 1);
    if (s.rank == 2) s.perm[0] = 1, s.perm[1] = 0;
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(transpose_elements(s)));
    std::vector<float> want(x.size());
    transpose_reference(s, x.data(), want.data());
    for (int threads : {1, 2}) {
      std::vector<float> got(x.size(), NAN);
      transpose(s, x.data(), got.data(), threads);
      ASSERT_EQ(got, want) << "trial " << trial;
    }
  }
}

TEST(Transpose, SwapsTheLastTwoAxes) {
  TransposeShape s;
  s.rank = 3;
  s.in[0] = 1, s.in[1] = 2, s.in[2] = 3;
  s.perm[0] = 0, s.perm[1] = 2, s.perm[2] = 1;
  const std::vector<float> x = {0, 1, 2, 3, 4, 5};
  std::vector<float> y(6);
  transpose(s, x.data(), y.data(), 1);
  EXPECT_EQ(y, (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

}  // namespace
}  // namespace edgegan::cpu

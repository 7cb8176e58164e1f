// dense: the kernels against their definitions (and, for the backward, finite differences or the forward they invert).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/dense/dense.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(Dense, MatchesReferenceForAwkwardSizes) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t rows = uniform_int(rng, 1, 9), in = uniform_int(rng, 1, 70), out = uniform_int(rng, 1, 200);
    const auto x = random_floats(rng, static_cast<size_t>(rows * in));
    const auto w = random_floats(rng, static_cast<size_t>(in * out));
    const auto b = random_floats(rng, static_cast<size_t>(out));
    Epilogue ep{trial % 2 ? b.data() : nullptr, static_cast<Activation>(trial % 5), 0.1f};
    std::vector<float> ref(static_cast<size_t>(rows * out)), y(ref.size(), NAN);
    dense_reference(rows, in, out, x.data(), w.data(), ref.data(), ep);
    dense(rows, in, out, x.data(), w.data(), y.data(), ep, 2);
    ASSERT_LE(max_abs_diff(y, ref), 1e-5f) << rows << "x" << in << "->" << out;
  }
}

TEST(DenseBackward, MatchesFiniteDifferences) {
  std::mt19937 rng(41);
  const int64_t rows = 3, in = 5, out = 4;
  auto x = random_floats(rng, rows * in), w = random_floats(rng, in * out), b = random_floats(rng, out);
  const auto g = random_floats(rng, rows * out);
  auto loss = [&] {
    std::vector<float> y(rows * out);
    dense_reference(rows, in, out, x.data(), w.data(), y.data(), Epilogue{b.data(), Activation::kNone, 0});
    double l = 0;
    for (size_t i = 0; i < y.size(); ++i) l += static_cast<double>(y[i]) * g[i];
    return l;
  };
  std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
  dense_backward(rows, in, out, x.data(), w.data(), g.data(), dx.data(), dw.data(), db.data());
  auto check = [&](std::vector<float>& v, const std::vector<float>& grad, const char* what) {
    for (size_t i = 0; i < v.size(); ++i) {
      const float saved = v[i];
      v[i] = saved + 0.1f;
      const double up = loss();
      v[i] = saved - 0.1f;
      const double down = loss();
      v[i] = saved;
      EXPECT_NEAR((up - down) / 0.2, grad[i], 1e-3) << what << "[" << i << "]";
    }
  };
  check(x, dx, "dx");
  check(w, dw, "dw");
  check(b, db, "db");
}

}  // namespace
}  // namespace edgegan::cpu

// softmax: the fast forward against the double reference over random [outer, axis,
// inner] shapes at 1 and 2 threads, large inputs included (no overflow); the backward
// against central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/softmax/softmax.h"
#include "tests/kernels_cpu/backward_test_util.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

TEST(Softmax, FastMatchesReference) {
  std::mt19937 rng(55);
  for (int trial = 0; trial < 300; ++trial) {
    SoftmaxShape s{uniform_int(rng, 1, 6), uniform_int(rng, 1, 70), trial % 2 ? 1 : uniform_int(rng, 1, 20)};
    const float scale = trial % 7 == 0 ? 200.f : 4.f;  // exp(200) overflows without the max
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(s.outer * s.axis * s.inner), -scale, scale);
    std::vector<float> want(x.size());
    softmax_reference(s, x.data(), want.data());
    for (int threads : {1, 2}) {
      std::vector<float> got(x.size(), NAN);
      softmax(s, x.data(), got.data(), threads);
      for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-6f) << "trial " << trial;
    }
  }
}

// Attention rows: long, some entries masked by -100 (SwinIR's shift mask) or -inf, the
// rest spread wide enough that exponentials reach the underflow clamp.
TEST(Softmax, LongMaskedRowsMatchReference) {
  std::mt19937 rng(57);
  for (int trial = 0; trial < 12; ++trial) {
    SoftmaxShape s{uniform_int(rng, 1, 4), uniform_int(rng, 60, 1100), trial % 3 ? 1 : uniform_int(rng, 2, 6)};
    std::vector<float> x = random_floats(rng, static_cast<size_t>(s.outer * s.axis * s.inner), -60, 60);
    for (size_t i = 0; i < x.size(); i += static_cast<size_t>(uniform_int(rng, 2, 9))) x[i] = i % 2 ? -100.f : -INFINITY;
    std::vector<float> want(x.size());
    softmax_reference(s, x.data(), want.data());
    for (int threads : {1, 2}) {
      std::vector<float> got(x.size(), NAN);
      softmax(s, x.data(), got.data(), threads);
      for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-6f) << "trial " << trial << " i " << i;
    }
  }
}

TEST(Softmax, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(56);
  for (int trial = 0; trial < 40; ++trial) {
    SoftmaxShape s{uniform_int(rng, 1, 3), uniform_int(rng, 1, 8), uniform_int(rng, 1, 4)};
    std::vector<float> x = random_floats(rng, static_cast<size_t>(s.outer * s.axis * s.inner), -2, 2);
    const std::vector<float> g = random_floats(rng, x.size());
    std::vector<float> y(x.size()), dx(x.size(), NAN);
    softmax_reference(s, x.data(), y.data());
    softmax_backward(s, y.data(), g.data(), dx.data(), false, 2);
    for (size_t i = 0; i < x.size(); ++i) {
      auto forward = [&] {
        std::vector<float> out(x.size());
        softmax_reference(s, x.data(), out.data());
        return out;
      };
      const float saved = x[i], h = 1e-2f;
      x[i] = saved + h;
      const double up = loss(forward(), g);
      x[i] = saved - h;
      const double down = loss(forward(), g);
      x[i] = saved;
      const double fd = (up - down) / (2 * h);
      ASSERT_NEAR(dx[i], fd, 2e-3) << "trial " << trial << " i " << i;
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu

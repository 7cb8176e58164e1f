// optimizer: the kernels against their definitions (and, for the backward, finite differences or the forward they invert).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/optimizer/optimizer.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::max_abs_diff;
using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

// Expected parameters after three steps, recorded from torch 1.13:
//   grads = [[0.3,-1.2,0.05], [-0.7,0.4,0.9], [0.2,0.2,-0.3]]; p0 = [1.0,-2.0,0.5]
//   for g in grads: opt.zero_grad(); p.grad = g; opt.step()
struct OptimCase {
  const char* name;
  std::function<void(std::vector<float>&, const std::vector<float>&, std::vector<float>&, std::vector<float>&, int64_t)> step;
  std::vector<float> expected;
};

TEST(Optimizers, MatchTorchOptimTrajectories) {
  const std::vector<std::vector<float>> grads = {{0.3f, -1.2f, 0.05f}, {-0.7f, 0.4f, 0.9f}, {0.2f, 0.2f, -0.3f}};
  auto sgd = [](SgdOptions o) {
    return [o](std::vector<float>& p, const std::vector<float>& g, std::vector<float>& s1, std::vector<float>&, int64_t step) {
      sgd_step(3, p.data(), g.data(), s1.data(), step == 1, o);
    };
  };
  auto adam = [](AdamOptions o) {
    return [o](std::vector<float>& p, const std::vector<float>& g, std::vector<float>& m, std::vector<float>& v, int64_t step) {
      adam_step(3, p.data(), g.data(), m.data(), v.data(), step, o);
    };
  };
  const std::vector<OptimCase> cases = {
      // SGD(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
      {"sgd nesterov", sgd({0.1f, 0.9f, 0.f, 0.01f, true}), {1.04055095f, -1.71874046f, 0.292263806f}},
      // SGD(lr=0.05, momentum=0.8, dampening=0.3)
      {"sgd dampening", sgd({0.05f, 0.8f, 0.3f, 0.f, false}), {1.00049996f, -1.88579988f, 0.447700024f}},
      // SGD(lr=0.2)
      {"sgd plain", sgd({0.2f, 0.f, 0.f, 0.f, false}), {1.04000008f, -1.88f, 0.370000005f}},
      // Adam(lr=0.01, betas=(0.9, 0.99), eps=1e-8)
      {"adam", adam({0.01f, 0.9f, 0.99f, 1e-8f, 0.f}), {0.99571383f, -1.98392546f, 0.478514194f}},
      // Adam(lr=2e-4, betas=(0.5, 0.999), weight_decay=0.001)  -- the DCGAN setting
      {"adam dcgan", adam({2e-4f, 0.5f, 0.999f, 1e-8f, 0.001f}), {0.999954343f, -1.99978459f, 0.499572456f}},
  };
  for (const auto& c : cases) {
    std::vector<float> p = {1.f, -2.f, 0.5f}, s1(3, 0.f), s2(3, 0.f);
    for (int64_t step = 1; step <= 3; ++step) c.step(p, grads[static_cast<size_t>(step - 1)], s1, s2, step);
    for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(p[i], c.expected[i], 2e-7f * (1 + std::abs(c.expected[i]))) << c.name << " [" << i << "]";
  }
}

}  // namespace
}  // namespace edgegan::cpu

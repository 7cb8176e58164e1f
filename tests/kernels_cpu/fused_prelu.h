// A fused PRelu in the kernels' random epilogue tests: its slopes, and the draw of an
// epilogue's activation that includes it.
#pragma once

#include <random>
#include <vector>

#include "kernels_cpu/common/epilogue.h"
#include "tests/test_util.h"

namespace edgegan::cpu {

// One slope per channel in [0.05, 0.6], or (every other draw) one value repeated, as the
// converter writes a shared slope.
inline std::vector<float> random_prelu_slopes(std::mt19937& rng, int64_t channels) {
  using edgegan::testing::random_floats;
  using edgegan::testing::uniform_int;
  const auto n = static_cast<size_t>(channels);
  if (uniform_int(rng, 0, 1)) return random_floats(rng, n, 0.05f, 0.6f);
  return std::vector<float>(n, random_floats(rng, 1, 0.05f, 0.6f)[0]);
}

// ep's activation: None, Relu, LeakyRelu (0.2), Tanh, Sigmoid or a PRelu whose slopes it
// draws into `slopes` (which must outlive ep), each as likely.
inline void draw_epilogue_activation(std::mt19937& rng, Epilogue& ep, std::vector<float>& slopes, int64_t channels) {
  const int k = edgegan::testing::uniform_int(rng, 0, 5);
  ep.activation = k == 5 ? Activation::kPRelu : static_cast<Activation>(k);
  ep.alpha = 0.2f;
  if (ep.activation != Activation::kPRelu) return;
  slopes = random_prelu_slopes(rng, channels);
  ep.slope = slopes.data();
}

}  // namespace edgegan::cpu

// A few optimizer steps pulling a trainer's first output towards a constant by MSE: the
// engine tests' check that training lowers a loss.
#pragma once

#include <utility>
#include <vector>

#include "edgegan/trainer.h"

namespace edgegan::testing {

// Runs `steps` forward/backward/step rounds on `inputs`; returns the loss of the first
// round and of the last.
inline std::pair<double, double> mse_steps_towards(Trainer& trainer, const std::vector<Tensor>& inputs, int steps, float target_value = 0.5f) {
  std::vector<float> target;
  double first = 0, last = 0;
  for (int step = 0; step < steps; ++step) {
    const std::vector<Tensor> out = trainer.forward(inputs);
    if (target.empty()) target.assign(out[0].f32.size(), target_value);
    Tensor grad = out[0];
    double loss = 0;
    for (size_t i = 0; i < grad.f32.size(); ++i) {
      const double d = out[0].f32[i] - target[i];
      loss += d * d / static_cast<double>(grad.f32.size());
      grad.f32[i] = static_cast<float>(2 * d / static_cast<double>(grad.f32.size()));
    }
    if (step == 0) first = loss;
    last = loss;
    trainer.backward({grad});
    trainer.step();
  }
  return {first, last};
}

}  // namespace edgegan::testing

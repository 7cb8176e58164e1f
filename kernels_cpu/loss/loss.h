// Losses for fine-tuning: each returns the mean loss of `prediction` against
// `targets` and writes d(loss)/d(prediction) into `grad` (PyTorch's semantics,
// reduction='mean', so trajectories compare with torch.nn).
#pragma once

#include <cstdint>

namespace edgegan::cpu {

// torch.nn.BCEWithLogitsLoss, numerically stable.
double bce_with_logits_loss(int64_t count, const float* logits, const float* targets, float* grad);
double mse_loss(int64_t count, const float* prediction, const float* targets, float* grad);  // torch.nn.MSELoss
double l1_loss(int64_t count, const float* prediction, const float* targets, float* grad);   // torch.nn.L1Loss

}  // namespace edgegan::cpu

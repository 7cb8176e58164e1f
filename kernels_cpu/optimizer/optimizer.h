// Optimizers, one parameter tensor at a time (torch.optim semantics, so a
// fine-tuning run follows PyTorch's trajectory); state arrays start zeroed.
#pragma once

#include <cstdint>

namespace edgegan::cpu {

struct SgdOptions {
  float lr = 0.01f, momentum = 0.f, dampening = 0.f, weight_decay = 0.f;
  bool nesterov = false;
};
// torch.optim.SGD; `velocity` (count) is the momentum buffer; `first_step` as torch's
// "buffer is None" case (the buffer is set to the gradient, without dampening).
void sgd_step(int64_t count, float* params, const float* grads, float* velocity, bool first_step, const SgdOptions& options);

struct AdamOptions {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.f;
};
// torch.optim.Adam (not AdamW); `step` counts from 1; m and v are the moment buffers.
void adam_step(int64_t count, float* params, const float* grads, float* m, float* v, int64_t step, const AdamOptions& options);

}  // namespace edgegan::cpu

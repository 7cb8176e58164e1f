// Backward passes of the small operators, the losses and the optimizers that
// fine-tuning needs (conv and transposed-conv backward live beside their forward
// kernels). Semantics follow PyTorch's, so gradients and trajectories can be
// compared with torch.autograd and torch.optim.
#pragma once

#include <cstdint>

#include "kernels_cpu/epilogue.h"

namespace edgegan::cpu {

// ---- layers
// Dense y[rows, out] = x[rows, in] · W[in][out] + b: dx (may be null), dW, db (may be null); all overwritten.
void dense_backward(int64_t rows, int64_t in_features, int64_t out_features, const float* x, const float* weights,
                    const float* dy, float* dx, float* dweights, float* dbias);

// Activation gradient from the activation's OUTPUT y (what a fused epilogue leaves):
// dx = dy * act'(x), written in place into `grad` (which holds dy on entry).
void activation_backward(int64_t count, const float* y, float* grad, Activation activation, float alpha);

// Embedding y[k, :] = table[idx[k], :]: dtable (rows x dim, overwritten) gets every dy row
// added to its index's row, in k order (deterministic). Indices must be in range.
void embedding_backward(int64_t count, const int64_t* indices, int64_t rows, int64_t dim, const float* dy, float* dtable);

// Concatenation (tensor_ops.h concat): scatters dy's chunks back to each input's gradient.
void concat_backward(int64_t outer, const float* dy, int inputs, const int64_t* chunks, float* const* dinputs);

// ---- losses: return the mean loss and write d(loss)/d(prediction) into `grad`.
// Binary cross-entropy on logits (torch.nn.BCEWithLogitsLoss, reduction='mean'), numerically stable.
double bce_with_logits_loss(int64_t count, const float* logits, const float* targets, float* grad);
double mse_loss(int64_t count, const float* prediction, const float* targets, float* grad);  // torch.nn.MSELoss
double l1_loss(int64_t count, const float* prediction, const float* targets, float* grad);   // torch.nn.L1Loss

// ---- optimizers, one parameter tensor at a time; state arrays start zeroed.
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

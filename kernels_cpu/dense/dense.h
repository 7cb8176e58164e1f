// Fully connected layer: y[rows, out] = x[rows, in] · W[in][out] + bias, then activation.
#pragma once

#include <cstdint>

#include "kernels_cpu/common/epilogue.h"

namespace edgegan::cpu {

void dense_reference(int64_t rows, int64_t in_features, int64_t out_features, const float* x,
                     const float* weights, float* y, const Epilogue& epilogue);

// Splits the output features into column blocks across threads (batch 1 is the common case).
void dense(int64_t rows, int64_t in_features, int64_t out_features, const float* x,
           const float* weights, float* y, const Epilogue& epilogue, int threads);


// dx (may be null), dW, db (may be null); all overwritten.
void dense_backward(int64_t rows, int64_t in_features, int64_t out_features, const float* x, const float* weights,
                    const float* dy, float* dx, float* dweights, float* dbias);

}  // namespace edgegan::cpu

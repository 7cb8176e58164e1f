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
// An fp16 session's route, x and y halves: x widened once into the workspace
// (dense_halves_workspace floats, with each thread's block of rows x 64 floats), each
// column block summed and activated in floats as dense does, narrowed. Returns whether
// a finite output became infinite.
int64_t dense_halves_workspace(int64_t rows, int64_t in_features, int threads);
bool dense_halves(int64_t rows, int64_t in_features, int64_t out_features, const uint16_t* x, const float* weights, uint16_t* y,
                  const Epilogue& epilogue, int threads, float* workspace);


// dx (may be null), dW, db (may be null); all overwritten.
void dense_backward(int64_t rows, int64_t in_features, int64_t out_features, const float* x, const float* weights,
                    const float* dy, float* dx, float* dweights, float* dbias);

}  // namespace edgegan::cpu

// Small data-movement and element-wise operators of generator graphs.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels_cpu/epilogue.h"

namespace edgegan::cpu {

// y[k, :] = table[indices[k], :] for k < count. Indices must already be checked
// to lie in [0, rows) (the session does so before any parallel work starts).
void embedding_lookup(int64_t count, const int64_t* indices, int64_t dim, const float* table, float* y);

// Concatenation along one axis of row-major tensors: `outer` = product of dims
// before the axis; each input contributes a contiguous chunk of `chunks[i]` floats
// per outer index (its axis length × the product of dims after the axis).
void concat(int64_t outer, const std::vector<const float*>& inputs, const std::vector<int64_t>& chunks,
            float* y);

// Layout changes between a logical NCHW order and NHWC storage.
void nchw_to_nhwc(int64_t n, int64_t c, int64_t h, int64_t w, const float* x, float* y);
void nhwc_to_nchw(int64_t n, int64_t c, int64_t h, int64_t w, const float* x, float* y);

// y = act(x * scale[c] + shift[c]) over `pixels` pixels of `channels` (in place allowed).
void channel_affine(int64_t pixels, int64_t channels, const float* scale, const float* shift,
                    const float* x, float* y, Activation activation, float alpha);

// y = act(x) over `count` floats (in place allowed).
void elementwise_activation(int64_t count, const float* x, float* y, Activation activation, float alpha);

}  // namespace edgegan::cpu

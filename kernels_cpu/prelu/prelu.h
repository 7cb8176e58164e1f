// PReLU: y = x > 0 ? x : slope[c] * x over `pixels` pixels of `channels` values
// (channels innermost: NHWC or rows; channels = 1 with one slope for every value).
#pragma once

#include <cstdint>

namespace edgegan::cpu {

void prelu_reference(int64_t pixels, int64_t channels, const float* slope, const float* x, float* y);
// Vectorised over channels, parallel over pixels; in place allowed (y == x).
void prelu(int64_t pixels, int64_t channels, const float* slope, const float* x, float* y, int threads);

// From the input x and dy: dx = dy * (x > 0 ? 1 : slope[c]) (overwritten, or added when
// `accumulate`; dx may be null), and when dslope is given dslope[c] += sum over pixels of
// (x > 0 ? 0 : dy * x), summed in pixel order (the same bits at any thread count).
// An fp16 session's route: x and y halves (in place allowed), widened per block, the
// same selects in fp32, narrowed (ties to even). Returns whether a finite value became
// infinite (past the half range).
bool prelu_halves(int64_t pixels, int64_t channels, const float* slope, const uint16_t* x, uint16_t* y, int threads);

void prelu_backward(int64_t pixels, int64_t channels, const float* slope, const float* x, const float* dy, float* dx, bool accumulate,
                    float* dslope, int threads);

}  // namespace edgegan::cpu

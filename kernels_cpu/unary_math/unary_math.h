// UnaryMath: y = f(x) element by element over `count` floats (in place allowed):
// sqrt, 1/sqrt, exp, log, erf, x^exponent (x*x for 2, sqrt for 0.5), |x|, -x. The fast
// forward runs blocks on threads with one loop per function (the common ones vectorise);
// its values are the reference's, bit for bit. The backward reads the input.
#pragma once

#include <cstdint>

#include "kernels_common/unary_math.h"

namespace edgegan::cpu {

float unary_math_value(UnaryMathOp op, float exponent, float x);
void unary_math_reference(int64_t count, UnaryMathOp op, float exponent, const float* x, float* y);
void unary_math(int64_t count, UnaryMathOp op, float exponent, const float* x, float* y, int threads);

// dx = dy * f'(x) (overwrites dx, or adds to it when `accumulate`); dx may be dy.
void unary_math_backward(int64_t count, UnaryMathOp op, float exponent, const float* x, const float* dy, float* dx, bool accumulate,
                         int threads);

}  // namespace edgegan::cpu

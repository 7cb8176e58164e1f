#version 460
// Element-wise run-time math (t0 -> t1, which may be the same tensor), numbered as
// kernels_common/unary_math.h: sqrt, rsqrt, exp, log, erf, pow (a constant exponent),
// abs, neg. GLSL leaves pow undefined for x <= 0 and has no erf: both are spelled out
// here as the C library defines them.
#include "common.glsl"
#include "erf.glsl"

float nan_value() { return uintBitsToFloat(0x7fc00000u); }
float inf_value() { return uintBitsToFloat(0x7f800000u); }

// pow(x, e) with the C library's cases: x < 0 only for an integer e (signed by its
// parity), 0 to a negative power is infinite, anything to the 0 is 1.
float pow_exact(float x, float e) {
  if (e == 2.0) return x * x;
  if (e == 0.5) return sqrt(x);
  if (e == 1.0) return x;
  if (e == 0.0) return 1.0;
  if (isnan(x)) return x;
  if (x == 0.0) return e > 0.0 ? 0.0 : inf_value();
  if (x > 0.0) return exp2(e * log2(x));
  if (floor(e) != e) return nan_value();
  const float r = exp2(e * log2(-x));
  return mod(e, 2.0) == 1.0 ? -r : r;
}

float unary_math(int op, float e, float x) {
  switch (op) {
    case 0: return sqrt(x);
    case 1: return 1.0 / sqrt(x);
    case 2: return exp(x);
    case 3: return log(x);
    case 4: return erf_exact(x);
    case 5: return pow_exact(x, e);
    case 6: return abs(x);
    case 7: return -x;
  }
  return x;
}

void main() {
  const int op = param(0);
  const float e = param_f(1);
  FOR_EACH_ELEMENT(i) st(pc.t1, i, unary_math(op, e, ld(pc.t0, i)));
}

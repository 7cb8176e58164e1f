// The activations on Vulkan: the CPU's definitions (kernels_cpu/activation/activation.h),
// numbered as kernels_common/activation.h's enum (the backend checks the count).
#include "erf.glsl"
const int kActNone = 0, kActRelu = 1, kActLeakyRelu = 2, kActTanh = 3, kActSigmoid = 4, kActElu = 5, kActSelu = 6,
          kActClip = 7, kActHardSigmoid = 8, kActHardSwish = 9, kActSoftplus = 10, kActMish = 11, kActPRelu = 12,
          kActGelu = 13, kActGeluTanh = 14, kActSilu = 15;
const int kActCount = 16;

float softplus_exact(float v) { return v > 20.0 ? v : log(1.0 + exp(v)); }
// exp(v) - 1 without losing the small values' digits.
float expm1_exact(float v) { return abs(v) < 1e-3 ? v + 0.5 * v * v + v * v * v / 6.0 : exp(v) - 1.0; }
// tanh through exp of a negative argument (GLSL's tanh may overflow for large |v|).
float tanh_exact(float v) {
  float e = exp(-2.0 * abs(v));
  float t = (1.0 - e) / (1.0 + e);
  return v < 0.0 ? -t : t;
}

float activate(float v, int act, float alpha, float beta) {
  switch (act) {
    case kActRelu: return v > 0.0 ? v : 0.0;
    case kActLeakyRelu:
    case kActPRelu: return v > 0.0 ? v : v * alpha;
    case kActTanh: return tanh_exact(v);
    case kActSigmoid: return 1.0 / (1.0 + exp(-v));
    case kActElu: return v > 0.0 ? v : alpha * expm1_exact(v);
    case kActSelu: return v > 0.0 ? beta * v : beta * alpha * expm1_exact(v);
    case kActClip: return min(beta, max(alpha, v));
    case kActHardSigmoid: return min(1.0, max(0.0, alpha * v + beta));
    case kActHardSwish: return v * min(1.0, max(0.0, v / 6.0 + 0.5));
    case kActSoftplus: return softplus_exact(v);
    case kActMish: return v * tanh_exact(softplus_exact(v));
    case kActGelu: return 0.5 * v * (1.0 + erf_exact(v * 0.70710678118654752));
    case kActGeluTanh: return 0.5 * v * (1.0 + tanh_exact(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case kActSilu: return v / (1.0 + exp(-v));
  }
  return v;
}

#version 460
// GroupNorm of an NHWC map (InstanceNorm: groups == channels) in two dispatches.
// pc.first == 0: per (sample, group) its mean and 1/sqrt(var + eps) into the workspace
// (t3, floats in both variants), from sums shifted by the group's first value and
// compensated (Kahan), so that large groups keep the CPU's accuracy without 64-bit
// floats. pc.first == 1: per value
// y = act(x̂ * scale[c] + shift[c]) (+ residual t2).
#include "common.glsl"
#include "activation.glsl"

void main() {
  const int P = param(0), C = param(1), G = param(2), act = param(3);
  const float alpha = param_f(4), beta = param_f(5), epsilon = param_f(6);
  const int scale = param(7), shift = param(8), residual = param(9);
  const int cpg = C / G;
  Floats u = upload_floats();
  if (pc.first == 0u) {
    FOR_EACH_ELEMENT(i) {
      const int n = int(i) / G, g = int(i) % G;
      const int base = n * P * C + g * cpg;
      const float origin = ld(pc.t0, base);
      float sum = 0.0, sum_c = 0.0, sq = 0.0, sq_c = 0.0;
      for (int p = 0; p < P; ++p)
        for (int c = 0; c < cpg; ++c) {
          const float d = ld(pc.t0, base + p * C + c) - origin;
          float y = d - sum_c, t = sum + y;
          sum_c = (t - sum) - y, sum = t;
          y = d * d - sq_c, t = sq + y;
          sq_c = (t - sq) - y, sq = t;
        }
      const float count = float(P * cpg);
      const float m = sum / count;
      const float var = max(sq / count - m * m, 0.0);
      Stats(pc.t3).v[2 * i] = origin + m;
      Stats(pc.t3).v[2 * i + 1] = 1.0 / sqrt(var + epsilon);
    }
  } else {
    FOR_EACH_ELEMENT(i) {
      const int c = int(i) % C, n = int(i) / (P * C);
      const int stat = 2 * (n * G + c / cpg);
      const float xhat = (ld(pc.t0, i) - Stats(pc.t3).v[stat]) * Stats(pc.t3).v[stat + 1];
      float y = activate(xhat * ld(u, scale + c) + ld(u, shift + c), act, alpha, beta);
      if (residual != 0) y += ld(pc.t2, i);
      st(pc.t1, i, y);
    }
  }
}

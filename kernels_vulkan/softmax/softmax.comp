#version 460
// Softmax along the middle axis of [outer, axis, inner]: one invocation per line
// (outer x inner of them); the maximum subtracted before exp. t0 -> t1, which may be
// the same tensor (each value is read before it is written).
#include "common.glsl"

void main() {
  const int axis = param(0), inner = param(1);
  FOR_EACH_ELEMENT(line) {
    const int base = (int(line) / inner) * axis * inner + int(line) % inner;
    float m = ld(pc.t0, base);
    for (int a = 1; a < axis; ++a) m = max(m, ld(pc.t0, base + a * inner));
    float sum = 0.0;
    for (int a = 0; a < axis; ++a) {
      const float y = exp(ld(pc.t0, base + a * inner) - m);
      st(pc.t1, base + a * inner, y);
      sum += y;
    }
    const float r = 1.0 / sum;
    for (int a = 0; a < axis; ++a) st(pc.t1, base + a * inner, ld(pc.t1, base + a * inner) * r);
  }
}

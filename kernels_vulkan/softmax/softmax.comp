#version 460
// Softmax along the middle axis of [outer, axis, inner]: one invocation per line
// (outer x inner of them); the maximum subtracted before exp. t0 -> t1, which may be
// the same tensor (each value is read before it is written).
#include "common.glsl"

void main() {
  const int axis = param(0), inner = param(1);
  FOR_EACH_ELEMENT(line) {
    const int base = (int(line) / inner) * axis * inner + int(line) % inner;
    float m = pc.t0.v[base];
    for (int a = 1; a < axis; ++a) m = max(m, pc.t0.v[base + a * inner]);
    float sum = 0.0;
    for (int a = 0; a < axis; ++a) {
      const float y = exp(pc.t0.v[base + a * inner] - m);
      pc.t1.v[base + a * inner] = y;
      sum += y;
    }
    const float r = 1.0 / sum;
    for (int a = 0; a < axis; ++a) pc.t1.v[base + a * inner] *= r;
  }
}

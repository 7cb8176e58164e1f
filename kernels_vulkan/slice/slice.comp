#version 460
// A strided slice of [outer][length][inner] along the middle axis: y[o][j][i] =
// x[o][start + j*step][i] for j < count (step may be negative).
#include "common.glsl"

void main() {
  const int length = param(0), inner = param(1), start = param(2), step = param(3), count = param(4);
  FOR_EACH_ELEMENT(i) {
    int rest = int(i);
    const int k = rest % inner; rest /= inner;
    const int j = rest % count;
    const int o = rest / count;
    st(pc.t1, i, ld(pc.t0, (o * length + start + j * step) * inner + k));
  }
}

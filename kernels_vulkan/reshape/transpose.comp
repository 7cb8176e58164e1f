#version 460
// Per sample, y[c][r] = x[r][c] for an x of `rows` x `cols` (NHWC <-> NCHW re-ordering).
#include "common.glsl"

void main() {
  const int rows = param(0), cols = param(1);
  FOR_EACH_ELEMENT(i) {
    int rest = int(i);
    const int c = rest % cols; rest /= cols;
    const int r = rest % rows;
    const int b = rest / rows;
    st(pc.t1, (b * cols + c) * rows + r, ld(pc.t0, i));
  }
}

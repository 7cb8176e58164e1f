#version 460
// Pad of an NHWC map through per-axis source tables (kernels::pad_source, built on the
// host): output (oy, ox) reads input (rows[oy], cols[ox]), or `value` where either is -1.
#include "common.glsl"

void main() {
  const int H = param(0), W = param(1), C = param(2), OH = param(3), OW = param(4), rows = param(5), cols = param(6);
  const float value = param_f(7);
  FOR_EACH_ELEMENT(i) {
    int rest = int(i);
    const int c = rest % C; rest /= C;
    const int ox = rest % OW; rest /= OW;
    const int oy = rest % OH;
    const int n = rest / OH;
    const int iy = param(rows + oy), ix = param(cols + ox);
    st(pc.t1, i, iy < 0 || ix < 0 ? value : ld(pc.t0, ((n * H + iy) * W + ix) * C + c));
  }
}

#version 460
// Resize of an NHWC map from the CPU's per-axis tap tables (kernels::resize_build_tables:
// `taps` clamped indices and weights per output row and column), the 2-D value being
// the sum over both axes' taps of the product of their weights.
#include "common.glsl"

void main() {
  const int H = param(0), W = param(1), C = param(2), OH = param(3), OW = param(4), taps = param(5);
  const int h_index = param(6), h_weight = param(7), w_index = param(8), w_weight = param(9);
  Floats u = upload_floats();
  FOR_EACH_ELEMENT(i) {
    int rest = int(i);
    const int c = rest % C; rest /= C;
    const int ox = rest % OW; rest /= OW;
    const int oy = rest % OH;
    const int n = rest / OH;
    float acc = 0.0;
    for (int a = 0; a < taps; ++a) {
      const int iy = param(h_index + oy * taps + a);
      float row = 0.0;
      for (int b = 0; b < taps; ++b)
        row += ld(u, w_weight + ox * taps + b) * ld(pc.t0, ((n * H + iy) * W + param(w_index + ox * taps + b)) * C + c);
      acc += ld(u, h_weight + oy * taps + a) * row;
    }
    st(pc.t1, i, acc);
  }
}

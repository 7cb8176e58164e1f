#version 460
// Sliding-channel convolution (DSXplore's SCC), NHWC, one invocation per output value:
// output channel o reads the `window` input channels (start(o) + j) mod Cin through a
// kh x kw kernel, start(o) = starts[o mod period]; weights [Cout][kh][kw][window]; then
// bias and the activation (or a per-channel PRelu slope).
#include "common.glsl"
#include "activation.glsl"

void main() {
  const int H = param(0), W = param(1), Cin = param(2), OH = param(3), OW = param(4), Cout = param(5);
  const int KH = param(6), KW = param(7), SH = param(8), SW = param(9), DH = param(10), DW = param(11), PT = param(12), PL = param(13);
  const int window = param(14), period = param(15), starts = param(16), weights = param(17), act = param(18);
  const float alpha = param_f(19), beta = param_f(20);
  const int bias = param(21), slope = param(22);
  Floats u = upload_floats();
  FOR_EACH_ELEMENT(i) {
    int rest = int(i);
    const int co = rest % Cout; rest /= Cout;
    const int ox = rest % OW; rest /= OW;
    const int oy = rest % OH;
    const int n = rest / OH;
    const int start = param(starts + co % period);
    float acc = 0.0;
    for (int ky = 0; ky < KH; ++ky) {
      const int iy = oy * SH - PT + ky * DH;
      if (iy < 0 || iy >= H) continue;
      for (int kx = 0; kx < KW; ++kx) {
        const int ix = ox * SW - PL + kx * DW;
        if (ix < 0 || ix >= W) continue;
        const int xbase = ((n * H + iy) * W + ix) * Cin;
        const int wbase = weights + ((co * KH + ky) * KW + kx) * window;
        for (int j = 0; j < window; ++j) acc += ld(pc.t0, xbase + (start + j) % Cin) * ld(u, wbase + j);
      }
    }
    if (bias >= 0) acc += ld(u, bias + co);
    st(pc.t1, i, activate(acc, act, slope >= 0 ? ld(u, slope + co) : alpha, beta));
  }
}

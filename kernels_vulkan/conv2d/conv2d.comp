#version 460
// Direct 2-D convolution, NHWC, one invocation per output value: groups, dilation, pads,
// then the epilogue (bias, activation or a per-channel PRelu slope, residual). Weights
// are the file's [kh][kw][Cin/groups][Cout]. A fused input map (a nearest upsampling
// and/or a reflect, edge or wrap pad folded into the convolution) is read through its
// per-axis index tables: H x W is then the map's size, each map row and column naming
// the source's. Dense runs here too, as a 1x1 map.
#include "common.glsl"
#include "activation.glsl"

void main() {
  const int N = param(0), H = param(1), W = param(2), Cin = param(3), OH = param(4), OW = param(5), Cout = param(6);
  const int KH = param(7), KW = param(8), SH = param(9), SW = param(10), DH = param(11), DW = param(12), PT = param(13), PL = param(14);
  const int groups = param(15), act = param(16);
  const float alpha = param_f(17), beta = param_f(18);
  const int weights = param(19), bias = param(20), slope = param(21), residual = param(22);
  const int map_rows = param(23), map_cols = param(24), SRC_H = param(25), SRC_W = param(26);
  const int cig = Cin / groups, cog = Cout / groups;
  Floats u = upload_floats();
  FOR_EACH_ELEMENT(i) {
    int rest = int(i);
    const int co = rest % Cout; rest /= Cout;
    const int ox = rest % OW; rest /= OW;
    const int oy = rest % OH;
    const int n = rest / OH;
    const int g = co / cog;
    float acc = 0.0;
    for (int ky = 0; ky < KH; ++ky) {
      const int iy = oy * SH - PT + ky * DH;
      if (iy < 0 || iy >= H) continue;
      for (int kx = 0; kx < KW; ++kx) {
        const int ix = ox * SW - PL + kx * DW;
        if (ix < 0 || ix >= W) continue;
        const int sy = map_rows >= 0 ? param(map_rows + iy) : iy, sx = map_rows >= 0 ? param(map_cols + ix) : ix;
        const int xbase = ((n * SRC_H + sy) * SRC_W + sx) * Cin + g * cig;
        const int wbase = weights + (ky * KW + kx) * cig * Cout + co;
        for (int c = 0; c < cig; ++c) acc += ld(pc.t0, xbase + c) * ld(u, wbase + c * Cout);
      }
    }
    if (bias >= 0) acc += ld(u, bias + co);
    acc = activate(acc, act, slope >= 0 ? ld(u, slope + co) : alpha, beta);
    if (residual != 0) acc += ld(pc.t2, i);
    st(pc.t1, i, acc);
  }
}

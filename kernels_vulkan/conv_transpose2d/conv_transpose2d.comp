#version 460
// Transposed convolution over the file's phase sub-kernels, one invocation per output
// value: the output's row and column say its phase (r = (o + pad) mod stride) and its
// q = (o + pad - r) / stride; the phase's taps read input q - offset, so no inserted
// zero is read and each output is written once, interleaved in place. Each phase's
// weights are [groups][taps_h][taps_w][Cin/groups][Cout/groups] (repacked from the
// file's panels when the kernel is built), then bias and activation or PRelu slope.
#include "common.glsl"
#include "activation.glsl"

void main() {
  const int N = param(0), H = param(1), W = param(2), Cin = param(3), OH = param(4), OW = param(5), Cout = param(6);
  const int SH = param(7), SW = param(8), PT = param(9), PL = param(10), groups = param(11), act = param(12);
  const float alpha = param_f(13), beta = param_f(14);
  const int bias = param(15), slope = param(16);
  // Per residue of each axis: (taps, index of its first offset in the parameters).
  const int table_h = param(17), table_w = param(18);
  const int phase_weights = param(19);  // per phase (h * SW + w): its weights' float offset, or -1
  const int cig = Cin / groups, cog = Cout / groups;
  Floats u = upload_floats();
  FOR_EACH_ELEMENT(i) {
    int rest = int(i);
    const int co = rest % Cout; rest /= Cout;
    const int ox = rest % OW; rest /= OW;
    const int oy = rest % OH;
    const int n = rest / OH;
    const int g = co / cog, col = co - g * cog;
    const int rh = ((oy + PT) % SH + SH) % SH, rw = ((ox + PL) % SW + SW) % SW;
    const int qh = (oy + PT - rh) / SH, qw = (ox + PL - rw) / SW;
    const int nth = param(table_h + 2 * rh), first_h = param(table_h + 2 * rh + 1);
    const int ntw = param(table_w + 2 * rw), first_w = param(table_w + 2 * rw + 1);
    const int base = param(phase_weights + rh * SW + rw);
    float acc = 0.0;
    if (base >= 0) {
      for (int th = 0; th < nth; ++th) {
        const int iy = qh - param(first_h + th);
        if (iy < 0 || iy >= H) continue;
        for (int tw = 0; tw < ntw; ++tw) {
          const int ix = qw - param(first_w + tw);
          if (ix < 0 || ix >= W) continue;
          const int xbase = ((n * H + iy) * W + ix) * Cin + g * cig;
          const int wbase = base + ((g * nth + th) * ntw + tw) * cig * cog + col;
          for (int c = 0; c < cig; ++c) acc += ld(pc.t0, xbase + c) * ld(u, wbase + c * cog);
        }
      }
    }
    if (bias >= 0) acc += ld(u, bias + co);
    st(pc.t1, i, activate(acc, act, slope >= 0 ? ld(u, slope + co) : alpha, beta));
  }
}

#version 460
// ModulatedConv2D's passes around its nested convolution, one per dispatch (pc.first):
// 0: t1 = t0 * style[n][c], the input scaled (t2: the style [N][Cin]);
// 1: t3[n][o] = 1 / sqrt(sum_i style[n][i]^2 * wsq[o][i] + eps), the demodulation
//    (t3: floats in both variants, in the kernel's workspace);
// 2: t1 = act(t1 * t3[n][c] + bias[c]) in place on the output (t3 unused when demod is 0).
#include "common.glsl"
#include "activation.glsl"

void main() {
  const int in_channels = param(0), out_channels = param(1), in_pixels = param(2), out_pixels = param(3);
  const int demodulate = param(4), wsq = param(5), bias = param(6), act = param(7);
  const float alpha = param_f(8), beta = param_f(9), eps = param_f(10);
  Floats u = upload_floats();
  if (pc.first == 0u) {
    FOR_EACH_ELEMENT(i) {
      const int n = int(i) / (in_pixels * in_channels), c = int(i) % in_channels;
      st(pc.t1, i, ld(pc.t0, i) * ld(pc.t2, n * in_channels + c));
    }
  } else if (pc.first == 1u) {
    FOR_EACH_ELEMENT(k) {
      const int n = int(k) / out_channels, o = int(k) % out_channels;
      float sum = 0.0;
      for (int i = 0; i < in_channels; ++i) {
        const float s = ld(pc.t2, n * in_channels + i);
        sum += s * s * ld(u, wsq + o * in_channels + i);
      }
      Stats(pc.t3).v[k] = 1.0 / sqrt(sum + eps);
    }
  } else {
    FOR_EACH_ELEMENT(i) {
      const int n = int(i) / (out_pixels * out_channels), c = int(i) % out_channels;
      float v = ld(pc.t1, i);
      if (demodulate != 0) v *= Stats(pc.t3).v[n * out_channels + c];
      if (bias >= 0) v += ld(u, bias + c);
      st(pc.t1, i, activate(v, act, alpha, beta));
    }
  }
}

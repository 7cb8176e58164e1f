#version 460
// y = act(x * scale[c] + shift[c]) over NHWC (channels last); may run in place.
#include "common.glsl"
#include "activation.glsl"

void main() {
  const int channels = param(0), act = param(1);
  const float alpha = param_f(2), beta = param_f(3);
  const int scale = param(4), shift = param(5);
  Floats u = upload_floats();
  FOR_EACH_ELEMENT(i) {
    const int c = int(i) % channels;
    st(pc.t1, i, activate(ld(pc.t0, i) * ld(u, scale + c) + ld(u, shift + c), act, alpha, beta));
  }
}

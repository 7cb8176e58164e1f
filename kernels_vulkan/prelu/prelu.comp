#version 460
// y = x > 0 ? x : slope[c] * x over NHWC (channels last); may run in place.
#include "common.glsl"

void main() {
  const int channels = param(0), slope = param(1);
  Floats u = upload_floats();
  FOR_EACH_ELEMENT(i) {
    const float x = ld(pc.t0, i);
    st(pc.t1, i, x > 0.0 ? x : x * ld(u, slope + int(i) % channels));
  }
}

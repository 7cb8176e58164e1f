#version 460
// y = x > 0 ? x : slope[c] * x over NHWC (channels last); may run in place.
#include "common.glsl"

void main() {
  const int channels = param(0), slope = param(1);
  Floats u = upload_floats();
  FOR_EACH_ELEMENT(i) {
    const float x = pc.t0.v[i];
    pc.t1.v[i] = x > 0.0 ? x : x * u.v[slope + int(i) % channels];
  }
}

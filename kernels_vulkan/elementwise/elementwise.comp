#version 460
// An activation over every value (t0 -> t1, which may be the same tensor).
#include "common.glsl"
#include "activation.glsl"

void main() {
  const int act = param(0);
  const float alpha = param_f(1), beta = param_f(2);
  FOR_EACH_ELEMENT(i) st(pc.t1, i, activate(ld(pc.t0, i), act, alpha, beta));
}

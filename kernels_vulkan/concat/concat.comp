#version 460
// One Concat input (pc.first = k) copied into its columns of the output: the output's
// rows are `row` floats, input k's `chunk` floats of each row start at `column`.
#include "common.glsl"

void main() {
  const int row = param(0), chunk = param(1 + 2 * int(pc.first)), column = param(2 + 2 * int(pc.first));
  FOR_EACH_ELEMENT(i) {
    const int r = int(i) / chunk, c = int(i) - r * chunk;
    st(pc.t1, r * row + column + c, ld(pc.t0, i));
  }
}

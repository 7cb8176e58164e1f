#version 460
// A permutation of storage axes (the Transpose op; reshape/transpose.comp is Reshape's
// per-sample matrix transpose): per output axis (outermost first) its size and the
// input's stride along it; one invocation per output value.
#include "common.glsl"

void main() {
  const int rank = param(0);
  FOR_EACH_ELEMENT(i) {
    int rest = int(i), offset = 0;
    for (int k = rank - 1; k >= 0; --k) {
      const int size = param(1 + 2 * k);
      offset += (rest % size) * param(2 + 2 * k);
      rest /= size;
    }
    st(pc.t1, i, ld(pc.t0, offset));
  }
}

#version 460
// Rows of the table gathered by int64 index (read as two 32-bit words, low first). An
// index outside the table writes zeros, and the lowest such position is recorded in
// the upload (param(2) names the word); a second dispatch of one invocation (pc.first
// == 1) copies that position's index into the two words after it, while the indices
// are still in the arena, for the host to report after the run.
#include "common.glsl"

void main() {
  const int rows = param(0), dim = param(1), error_word = param(2), table = param(3);
  Floats u = upload_floats();
  if (pc.first == 1u) {
    const int position = param(error_word);
    if (gl_GlobalInvocationID.x == 0u && position != 0x7fffffff) {
      pc.params.v[error_word + 1] = int(Uints(pc.t0).v[2 * position]);
      pc.params.v[error_word + 2] = int(Uints(pc.t0).v[2 * position + 1]);
    }
    return;
  }
  FOR_EACH_ELEMENT(i) {
    const int position = int(i) / dim, d = int(i) - position * dim;
    const uint low = Uints(pc.t0).v[2 * position];
    const uint high = Uints(pc.t0).v[2 * position + 1];
    if (high != 0u || low >= uint(rows)) {
      atomicMin(pc.params.v[error_word], position);
      st(pc.t1, i, 0.0);
    } else {
      st(pc.t1, i, ld(u, table + int(low) * dim + d));
    }
  }
}

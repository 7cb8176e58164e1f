#version 460
// Rows of the table gathered by int64 index (read as two 32-bit words, low first). An
// index outside the table writes zeros, and the lowest such position is recorded in
// the upload (param(2) names the word) for the host to report after the run.
#include "common.glsl"

void main() {
  const int rows = param(0), dim = param(1), error_word = param(2), table = param(3);
  Floats u = upload_floats();
  FOR_EACH_ELEMENT(i) {
    const int position = int(i) / dim, d = int(i) - position * dim;
    const uint low = Uints(pc.t0).v[2 * position];
    const uint high = Uints(pc.t0).v[2 * position + 1];
    if (high != 0u || low >= uint(rows)) {
      atomicMin(pc.params.v[error_word], position);
      pc.t1.v[i] = 0.0;
    } else {
      pc.t1.v[i] = u.v[table + int(low) * dim + d];
    }
  }
}

#version 460
// y[b0, b1, m, n] = sum_k a[b0, b1, m, k] * b[b0, b1, k, n], every operand read through
// its strides (batch 0, batch 1, row, column; a broadcast batch dim has stride 0): one
// invocation per output value, in index order [b0][b1][m][n].
#include "common.glsl"

// Operand t's stride s (0: batch 0, 1: batch 1, 2: row, 3: column).
int stride_of(int t, int s) { return param(4 + 4 * t + s); }

void main() {
  const int batch1 = param(0), M = param(1), N = param(2), K = param(3);
  FOR_EACH_ELEMENT(i) {
    const int n = int(i) % N;
    const int m = (int(i) / N) % M;
    const int b1 = (int(i) / (N * M)) % batch1;
    const int b0 = int(i) / (N * M * batch1);
    int pa = b0 * stride_of(0, 0) + b1 * stride_of(0, 1) + m * stride_of(0, 2);
    int pb = b0 * stride_of(1, 0) + b1 * stride_of(1, 1) + n * stride_of(1, 3);
    const int ca = stride_of(0, 3), rb = stride_of(1, 2);
    float sum = 0.0;
    for (int k = 0; k < K; ++k, pa += ca, pb += rb) sum += ld(pc.t0, pa) * ld(pc.t1, pb);
    st(pc.t2, b0 * stride_of(2, 0) + b1 * stride_of(2, 1) + m * stride_of(2, 2) + n * stride_of(2, 3), sum);
  }
}

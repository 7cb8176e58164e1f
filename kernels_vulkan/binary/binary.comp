#version 460
// y = a (+ - * /) b with broadcasting: per output dimension (innermost last) its size
// and each operand's stride (0 where the operand's size is 1). An operand the file
// holds as a constant is read from the upload instead of the arena.
#include "common.glsl"

void main() {
  const int op = param(0), rank = param(1), a_const = param(2), b_const = param(3);
  Floats u = upload_floats();
  FOR_EACH_ELEMENT(i) {
    int rest = int(i), ia = 0, ib = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int size = param(4 + 3 * d);
      const int k = rest % size;
      rest /= size;
      ia += k * param(5 + 3 * d);
      ib += k * param(6 + 3 * d);
    }
    const float a = a_const >= 0 ? ld(u, a_const + ia) : ld(pc.t0, ia);
    const float b = b_const >= 0 ? ld(u, b_const + ib) : ld(pc.t1, ib);
    float y;
    if (op == 0) y = a + b;
    else if (op == 1) y = a - b;
    else if (op == 2) y = a * b;
    else y = a / b;
    st(pc.t2, i, y);
  }
}

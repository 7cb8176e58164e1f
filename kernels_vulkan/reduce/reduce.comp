#version 460
// Sum, mean, max or L2 norm over some axes (ReduceOp's numbering): one invocation per
// output, its kept coordinates fixed, the reduced ones walked in index order. Max
// propagates NaN as the CPU does. Parameter block: op, rank, values per output, then
// per axis (outermost first) its size and 1 where it is reduced.
#include "common.glsl"

void main() {
  const int op = param(0), rank = param(1), count = param(2);
  FOR_EACH_ELEMENT(o) {
    // The output's first input value: its kept coordinates at the input's strides.
    int base = 0, rest = int(o), stride = 1;
    for (int k = rank - 1; k >= 0; --k) {
      const int size = param(3 + 2 * k);
      if (param(4 + 2 * k) == 0) {
        base += (rest % size) * stride;
        rest /= size;
      }
      stride *= size;
    }
    float acc = op == 2 ? uintBitsToFloat(0xff800000u) : 0.0;  // -inf for max
    for (int i = 0; i < count; ++i) {
      int offset = base, q = i;
      stride = 1;
      for (int k = rank - 1; k >= 0; --k) {
        const int size = param(3 + 2 * k);
        if (param(4 + 2 * k) != 0) {
          offset += (q % size) * stride;
          q /= size;
        }
        stride *= size;
      }
      const float v = ld(pc.t0, offset);
      if (op == 2) acc = v > acc || isnan(v) ? v : acc;
      else if (op == 3) acc += v * v;
      else acc += v;
    }
    st(pc.t1, o, op == 1 ? acc / float(count) : op == 3 ? sqrt(acc) : acc);
  }
}

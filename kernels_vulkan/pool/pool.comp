#version 460
// Max or average pooling of an NHWC map as the CPU defines it (kernels_cpu/pool): per
// axis only the taps inside the input are read; an average divides by their count, or
// with count_include_pad by the taps inside the padded input; max lets a larger value
// or a NaN take the place, and a window wholly in the padding gives 0.
#include "common.glsl"

// Per axis: in, kernel, stride, dilation, pad_begin, pad_end, out at param(base + k).
ivec2 valid_taps(int base, int o) {
  const int in_ = param(base), kernel = param(base + 1), stride = param(base + 2), dilation = param(base + 3), pad = param(base + 4);
  const int start = o * stride - pad;
  const int first = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  const int past = in_ - start <= 0 ? 0 : (in_ - start + dilation - 1) / dilation;
  const int last = max(first, min(kernel, past));
  return ivec2(first, last);
}

int axis_count(int base, int o, ivec2 valid, bool include_pad) {
  if (!include_pad) return valid.y - valid.x;
  const int in_ = param(base), kernel = param(base + 1), stride = param(base + 2), dilation = param(base + 3), pad = param(base + 4);
  const int start = o * stride - pad;
  const int end = min(start + (kernel - 1) * dilation + 1, in_ + param(base + 5));
  return (end - start + dilation - 1) / dilation;
}

void main() {
  const int C = param(0), is_max = param(1), include_pad = param(2);
  const int H = param(3), KH = param(4), SH = param(5), DH = param(6), PT = param(7), OH = param(9);
  const int W = param(10), KW = param(11), SW = param(12), DW = param(13), PL = param(14), OW = param(16);
  FOR_EACH_ELEMENT(i) {
    int rest = int(i);
    const int c = rest % C; rest /= C;
    const int ox = rest % OW; rest /= OW;
    const int oy = rest % OH;
    const int n = rest / OH;
    const ivec2 th = valid_taps(3, oy), tw = valid_taps(10, ox);
    const int y0 = oy * SH - PT, x0 = ox * SW - PL;
    const int base = n * H * W * C + c;
    if (is_max != 0) {
      float m = th.x == th.y || tw.x == tw.y ? 0.0 : uintBitsToFloat(0xff800000u);  // -infinity
      for (int kh = th.x; kh < th.y; ++kh)
        for (int kw = tw.x; kw < tw.y; ++kw) {
          const float v = ld(pc.t0, base + ((y0 + kh * DH) * W + x0 + kw * DW) * C);
          m = v > m || isnan(v) ? v : m;
        }
      st(pc.t1, i, m);
    } else {
      float sum = 0.0;
      for (int kh = th.x; kh < th.y; ++kh)
        for (int kw = tw.x; kw < tw.y; ++kw) sum += ld(pc.t0, base + ((y0 + kh * DH) * W + x0 + kw * DW) * C);
      const int divisor = axis_count(3, oy, th, include_pad != 0) * axis_count(10, ox, tw, include_pad != 0);
      st(pc.t1, i, divisor > 0 ? sum * (1.0 / float(divisor)) : 0.0);
    }
  }
}

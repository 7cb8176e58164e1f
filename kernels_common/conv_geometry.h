// Geometry shared by convolution and transposed convolution (ONNX / PyTorch
// semantics): one axis's lengths, kernel, stride, dilation and pads, and the
// counts of (position, tap) pairs that the trimmed kernels multiply.
//
//   convolution:            y[o] += x[o*stride - pad_begin + tap*dilation] * w[tap]
//   transposed convolution: y[i*stride - pad_begin + tap*dilation] += x[i] * w[tap]
#pragma once

#include <cstdint>
#include <initializer_list>

namespace edgegan::kernels {

struct ConvAxis {
  int64_t in = 0;         // input length
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_begin = 0;  // a transposed convolution's may be negative (ONNX output_shape asks for more output)
  int64_t pad_end = 0;
  int64_t out = 0;        // output length
};

// A 2-D convolution or transposed convolution over NHWC activations.
struct ConvShape {
  int64_t batch = 1;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  ConvAxis h, w;
};

// floor((in + pad_begin + pad_end - dilation*(kernel-1) - 1) / stride) + 1
int64_t conv_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end);

// (in-1)*stride - pad_begin - pad_end + dilation*(kernel-1) + output_padding + 1
int64_t conv_transpose_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                                     int64_t pad_end, int64_t output_padding);

// Number of (position p in [0, positions), tap t in [0, kernel)) pairs with
// 0 <= p*stride - pad_begin + t*dilation < target_length. For a transposed conv
// (positions = input, target = output) it is what the split algorithm multiplies;
// for a conv (positions = output, target = input), what the trimmed conv multiplies.
uint64_t count_tap_pairs(int64_t positions, int64_t stride, int64_t pad_begin, int64_t kernel, int64_t dilation,
                         int64_t target_length);

// Per channel pair, the products of one axis that read inside the input.
inline uint64_t conv_useful_pairs(const ConvAxis& a) { return count_tap_pairs(a.out, a.stride, a.pad_begin, a.kernel, a.dilation, a.in); }
// Per channel pair, the products of one axis that land inside the output.
inline uint64_t conv_transpose_useful_pairs(const ConvAxis& a) {
  return count_tap_pairs(a.in, a.stride, a.pad_begin, a.kernel, a.dilation, a.out);
}

// Product of non-negative factors, saturating at 2^62 instead of overflowing: sizes
// computed from a hostile model file must stay comparable against a limit.
inline int64_t saturating_product(std::initializer_list<int64_t> factors) {
  constexpr int64_t kCap = int64_t{1} << 62;
  __int128 p = 1;
  for (int64_t f : factors) {
    p *= f < 0 ? 0 : f;
    if (p > kCap) return kCap;
  }
  return static_cast<int64_t>(p);
}
// Sum of such sizes, saturating the same way.
inline int64_t saturating_sum(std::initializer_list<int64_t> terms) {
  constexpr int64_t kCap = int64_t{1} << 62;
  __int128 sum = 0;
  for (int64_t t : terms) sum += t < 0 ? 0 : t;
  return sum > kCap ? kCap : static_cast<int64_t>(sum);
}

// Floor division / modulo for possibly negative numerators (positive divisor).
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

}  // namespace edgegan::kernels

// The CPU kernels name these unqualified, and callers as cpu::; one definition.
namespace edgegan::cpu {
using namespace kernels;
}  // namespace edgegan::cpu

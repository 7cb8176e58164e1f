// An fp16 session's equal-shape Add, Sub and Mul in half arithmetic (ARMv8.2-A FP16,
// FADD/FSUB/FMUL on 8 halves). Each result is the exact one rounded once to a half, as
// the fp32 route's is (a product of two halves is exact in fp32; a sum is exact there
// unless one operand is below the other's last half bit, where both round to the larger):
// the same bits, without widening or narrowing.
#include <arm_neon.h>

#include <algorithm>

#include "kernels_cpu/binary/binary.h"

namespace edgegan::cpu {
namespace {

inline uint16x8_t finite(uint16x8_t h) { return vcltq_u16(vandq_u16(h, vdupq_n_u16(0x7FFF)), vdupq_n_u16(0x7C00)); }

template <BinaryOp Op>
inline uint16x8_t apply(uint16x8_t a, uint16x8_t b) {
  const float16x8_t x = vreinterpretq_f16_u16(a), y = vreinterpretq_f16_u16(b);
  if constexpr (Op == BinaryOp::kAdd) return vreinterpretq_u16_f16(vaddq_f16(x, y));
  else if constexpr (Op == BinaryOp::kSub) return vreinterpretq_u16_f16(vsubq_f16(x, y));
  else return vreinterpretq_u16_f16(vmulq_f16(x, y));
}

template <BinaryOp Op>
bool row(const uint16_t* a, const uint16_t* b, uint16_t* y, int64_t n) {
  uint16x8_t overflow = vdupq_n_u16(0);
  auto step = [&](uint16x8_t va, uint16x8_t vb) {
    const uint16x8_t r = apply<Op>(va, vb);
    // A finite pair whose result is not finite: past the half range.
    overflow = vorrq_u16(overflow, vandq_u16(vandq_u16(finite(va), finite(vb)), vmvnq_u16(finite(r))));
    return r;
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint16x8_t va = vld1q_u16(a + i), vb = vld1q_u16(b + i);  // both read before y (maybe a or b) is written
    vst1q_u16(y + i, step(va, vb));
  }
  if (i < n) {  // the last n % 8, staged (zeros past the end add and multiply harmlessly)
    alignas(16) uint16_t sa[8] = {}, sb[8] = {}, sy[8];
    std::copy(a + i, a + n, sa);
    std::copy(b + i, b + n, sb);
    vst1q_u16(sy, step(vld1q_u16(sa), vld1q_u16(sb)));
    std::copy(sy, sy + (n - i), y + i);
  }
  return vmaxvq_u16(overflow) != 0;
}

}  // namespace

bool binary_row_halves__neonfp16arith(BinaryOp op, const uint16_t* a, const uint16_t* b, uint16_t* y, int64_t n) {
  switch (op) {
    case BinaryOp::kAdd: return row<BinaryOp::kAdd>(a, b, y, n);
    case BinaryOp::kSub: return row<BinaryOp::kSub>(a, b, y, n);
    case BinaryOp::kMul: return row<BinaryOp::kMul>(a, b, y, n);
    case BinaryOp::kDiv: break;  // not offered: a quotient rounds twice through fp32
  }
  return false;
}

}  // namespace edgegan::cpu

// An fp16 session's equal-shape Add, Sub and Mul in half arithmetic (neonfp16arith)
// against the fp32-arithmetic route (plain NEON): the same bits, in place too, and an
// overflow reported. Skips where the CPU or build has no fp16 arithmetic.
#include <gtest/gtest.h>

#include "kernels_cpu/binary/binary.h"
#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/common/half_convert.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::uniform_int;

BinaryShape same_shape(int64_t n, int64_t h, int64_t w, int64_t c) {
  BinaryShape s;
  s.rank = 4;
  const int64_t dims[4] = {n, h, w, c};
  for (int i = 0; i < 4; ++i) s.out[i] = s.a[i] = s.b[i] = dims[i];
  return s;
}

std::vector<uint16_t> halves_of(const std::vector<float>& v) {
  std::vector<uint16_t> h(v.size());
  narrow_to_halves(Isa::kScalar, v.data(), h.data(), static_cast<int64_t>(v.size()));
  return h;
}

// in_place: y starts as a's copy and is operand a too.
std::vector<uint16_t> run(Isa isa, const BinaryShape& s, BinaryOp op, const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, int threads,
                          bool in_place, bool* overflow = nullptr) {
  ScopedIsa forced(isa);
  std::vector<uint16_t> y = in_place ? a : std::vector<uint16_t>(a.size(), 0xFFFF);
  const bool o = binary_halves(s, op, {in_place ? y.data() : a.data(), true}, {b.data(), true}, y.data(), threads);
  if (overflow) *overflow = o;
  return y;
}

TEST(BinaryHalfArithmetic, AddSubMulGiveTheFp32RoutesBits) {
  if (!isa_supported(Isa::kNeonFp16Arith)) GTEST_SKIP() << "this CPU or build has no fp16 arithmetic (neonfp16arith)";
  std::mt19937 rng(5408);
  for (int trial = 0; trial < 16; ++trial) {
    const BinaryShape s = same_shape(uniform_int(rng, 1, 2), uniform_int(rng, 1, 4), uniform_int(rng, 1, 20), uniform_int(rng, 1, 70));
    const size_t n = static_cast<size_t>(binary_elements(s.out, s.rank));
    // Magnitudes over the half range's decades, so sums round, cancel and lose the smaller operand.
    std::vector<float> fa = edgegan::testing::random_floats(rng, n), fb = edgegan::testing::random_floats(rng, n);
    for (size_t i = 0; i < n; ++i) fa[i] *= std::ldexp(1.f, uniform_int(rng, -20, 14)), fb[i] *= std::ldexp(1.f, uniform_int(rng, -20, 14));
    const std::vector<uint16_t> a = halves_of(fa), b = halves_of(fb);
    const BinaryOp op = static_cast<BinaryOp>(trial % 3);  // kAdd, kSub, kMul
    const int threads = 1;
    const bool in_place = trial % 4 == 3;
    const std::vector<uint16_t> got = run(Isa::kNeonFp16Arith, s, op, a, b, threads, in_place), want = run(Isa::kNeon, s, op, a, b, threads, in_place);
    size_t differ = 0;
    for (size_t i = 0; i < n; ++i) differ += got[i] != want[i];
    EXPECT_EQ(differ, 0u) << "trial " << trial << " op " << static_cast<int>(op) << ", " << n << " values" << (in_place ? " in place" : "");
  }
}

TEST(BinaryHalfArithmetic, AnOverflowIsReported) {
  if (!isa_supported(Isa::kNeonFp16Arith)) GTEST_SKIP() << "this CPU or build has no fp16 arithmetic (neonfp16arith)";
  const BinaryShape s = same_shape(1, 1, 3, 7);  // 21 values: a vector and a tail
  for (size_t at : {size_t{2}, size_t{19}}) {
    std::vector<float> fa(21, 1.f), fb(21, 2.f);
    fa[at] = fb[at] = 60000.f;
    bool overflow = false;
    run(Isa::kNeonFp16Arith, s, BinaryOp::kAdd, halves_of(fa), halves_of(fb), 1, false, &overflow);
    EXPECT_TRUE(overflow) << "at " << at;
    run(Isa::kNeonFp16Arith, s, BinaryOp::kSub, halves_of(fa), halves_of(fb), 1, false, &overflow);
    EXPECT_FALSE(overflow) << "at " << at;
  }
}

}  // namespace
}  // namespace edgegan::cpu

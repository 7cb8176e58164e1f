// An fp16 session's convolutions in half-precision arithmetic (ARMv8.2-A FP16, ISA
// neonfp16arith) against the same routes at plain NEON, which widen the halves and sum in
// fp32: within a stated tolerance where the half arithmetic applies, the same bits where
// it does not (kernels past one fp16 block, weights past the half range). Elsewhere (x86,
// an ARMv8.0 CPU, a build without EDGEGAN_NEON_FP16_ARITH) no family computes in halves.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "kernels_common/conv_geometry.h"
#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/common/half_convert.h"
#include "kernels_cpu/conv2d/conv2d_thin.h"
#include "kernels_cpu/conv2d/conv2d_trimmed.h"
#include "kernels_cpu/phase_lanes/phase_lanes_ukernel.h"
#include "tests/kernels_cpu/conv2d/conv2d_random_case.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::uniform_int;

// |y - ref| / max(1, max |ref|): the golden tests' measure (2e-2 there, against PyTorch).
float layer_error(const std::vector<float>& y, const std::vector<float>& ref) {
  float worst = 0.f, top = 1.f;
  for (size_t i = 0; i < ref.size(); ++i) top = std::max(top, std::abs(ref[i]));
  for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(y[i] - ref[i]));
  return worst / top;
}

std::vector<uint16_t> to_halves(const std::vector<float>& v) {
  std::vector<uint16_t> h(v.size());
  narrow_to_halves(Isa::kScalar, v.data(), h.data(), static_cast<int64_t>(v.size()));
  return h;
}

std::vector<float> to_floats(const std::vector<uint16_t>& h) {
  std::vector<float> v(h.size());
  widen_halves(Isa::kScalar, h.data(), v.data(), static_cast<int64_t>(h.size()));
  return v;
}

std::vector<uint16_t> thin_halves(Isa isa, const ConvShape& s, const std::vector<float>& packed, const std::vector<uint16_t>& x,
                                  const Epilogue& ep, const ConvInputMap* map, int threads, bool* overflow = nullptr) {
  ScopedIsa forced(isa);
  std::vector<uint16_t> y(static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels), 0xFFFF);
  std::vector<float> workspace(static_cast<size_t>(conv2d_thin_workspace(s, threads, true)), NAN);
  const bool o = conv2d_thin_halves(s, packed.data(), x.data(), y.data(), ep, threads, workspace.data(), map);
  if (overflow) *overflow = o;
  return y;
}

TEST(Conv2DHalfArithmetic, OnlyNeonFp16ArithComputesInHalves) {
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    ScopedIsa forced(isa);
    EXPECT_EQ(phase_lanes_half_ukernel() != nullptr, isa == Isa::kNeonFp16Arith) << isa_name(isa);
  }
}

TEST(Conv2DHalfArithmetic, TrimmedHalfWeightsOnlyWhereTheGemmHasHalfArithmetic) {
  ConvShape s;
  s.in_channels = 16;
  s.out_channels = 8;
  s.h = {4, 1, 1, 1, 0, 0, 4};
  s.w = s.h;
  const std::vector<float> w(16 * 8, 0.5f);
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    ScopedIsa forced(isa);
    EXPECT_EQ(conv2d_trimmed_half_weights(s, w.data()).size(), isa == Isa::kNeonFp16Arith ? w.size() : 0u) << isa_name(isa);
  }
}

// Tolerance of the half-arithmetic routes against the fp32-arithmetic ones, on the layer
// measure above: the goldens' 2e-2 against PyTorch. These layers are harsher than trained
// ones (inputs and weights in [-1, 1], up to 64 x 3 x 3 products, sums near 10 clipped
// to +-0.5 by a Clip: its error is measured against 1); the tests print their worst.
constexpr float kTolerance = 2e-2f;

TEST(Conv2DHalfArithmetic, ThinRouteIsWithinToleranceOfFp32Arithmetic) {
  if (!isa_supported(Isa::kNeonFp16Arith)) GTEST_SKIP() << "this CPU or build has no fp16 arithmetic (neonfp16arith)";
  std::mt19937 rng(5406);
  float worst_half = 0.f, worst_fp32 = 0.f, worst_vs_fp32_route = 0.f;
  int half_layers = 0, fp32_layers = 0;
  // Small maps: qemu emulates fp16 arithmetic in software.
  for (int trial = 0; trial < 48; ++trial) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 2);
    const bool thin_input = uniform_int(rng, 0, 1) == 0;
    s.in_channels = thin_input ? uniform_int(rng, 1, 4) : uniform_int(rng, 5, 24);
    s.out_channels = thin_input ? uniform_int(rng, 8, 32) : uniform_int(rng, 8, 16);
    const bool mapped = trial % 4 == 1;
    // Mostly 3x3 (one fp16 block of taps); some up to 9 (summed in fp32).
    const int64_t kernel_hi = trial % 3 == 2 ? 9 : 3;
    const RandomAxes axes = draw_random_axes(rng, s, mapped, 4, 24, [&](int, ConvAxis& a) {
      a.kernel = uniform_int(rng, 3, kernel_hi);
      a.pad_begin = uniform_int(rng, 0, 4);
      a.pad_end = uniform_int(rng, 0, 4);
    });
    if (s.h.out < 1 || s.w.out < 16) continue;
    Conv2DRandomCase c = make_conv2d_random_case(rng, s, mapped, axes);
    if (c.ep.residual) continue;  // the halves route has none (the adapter adds it)
    const std::vector<float> packed = c.packed_weights();
    const std::vector<uint16_t> x = to_halves(c.x);
    const int threads = 1;
    const std::vector<uint16_t> y32 = thin_halves(Isa::kNeon, s, packed, x, c.ep, c.input_map(), threads);
    const std::vector<uint16_t> y16 = thin_halves(Isa::kNeonFp16Arith, s, packed, x, c.ep, c.input_map(), threads);
    std::ostringstream what;
    what << "trial " << trial << ": " << s.batch << "x" << s.h.in << "x" << s.w.in << "x" << s.in_channels << " -> " << s.out_channels << " k"
         << s.h.kernel << "x" << s.w.kernel << (mapped ? " mapped" : "") << " activation " << static_cast<int>(c.ep.activation) << ", " << threads
         << " threads";
    if (s.h.kernel * s.w.kernel > kPhaseLanesHalfBlockTerms) {
      EXPECT_EQ(y16, y32) << what.str() << ": past one fp16 block, the fp32 arithmetic's bits";
      ++fp32_layers;
      continue;
    }
    const float e = layer_error(to_floats(y16), to_floats(y32));
    EXPECT_LE(e, kTolerance) << what.str();
    worst_vs_fp32_route = std::max(worst_vs_fp32_route, e);
    // Both against the fp32 reference on the unrounded input (what the goldens measure).
    worst_half = std::max(worst_half, layer_error(to_floats(y16), c.ref));
    worst_fp32 = std::max(worst_fp32, layer_error(to_floats(y32), c.ref));
    ++half_layers;
  }
  EXPECT_GT(half_layers, 12);
  EXPECT_GT(fp32_layers, 2);
  std::printf("thin, %d layers in half arithmetic: worst error %.2e against the fp32-arithmetic route; against fp32 %.2e (half arithmetic) "
              "and %.2e (fp32 arithmetic)\n",
              half_layers, worst_vs_fp32_route, worst_half, worst_fp32);
}

std::vector<uint16_t> trimmed_halves(Isa isa, const ConvShape& s, const std::vector<float>& packed, const std::vector<uint16_t>& x,
                                     const Epilogue& ep, int threads, bool* overflow = nullptr) {
  ScopedIsa forced(isa);
  const std::vector<uint16_t> half_weights = conv2d_trimmed_half_weights(s, packed.data());
  std::vector<uint16_t> y(static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels), 0xFFFF);
  std::vector<float> workspace(static_cast<size_t>(conv2d_trimmed_halves_workspace(s, threads)), NAN);
  const bool o = conv2d_trimmed_halves(s, packed.data(), x.data(), y.data(), ep, threads, workspace.data(), nullptr,
                                       half_weights.empty() ? nullptr : half_weights.data());
  if (overflow) *overflow = o;
  return y;
}

TEST(Conv2DHalfArithmetic, TrimmedGemmRouteIsWithinToleranceOfFp32Arithmetic) {
  if (!isa_supported(Isa::kNeonFp16Arith)) GTEST_SKIP() << "this CPU or build has no fp16 arithmetic (neonfp16arith)";
  std::mt19937 rng(5407);
  float worst_half = 0.f, worst_fp32 = 0.f, worst_vs_fp32_route = 0.f;
  int layers = 0;
  for (int trial = 0; trial < 30; ++trial) {
    ConvShape s;
    s.batch = uniform_int(rng, 1, 2);
    s.in_channels = uniform_int(rng, 16, 64);
    s.out_channels = uniform_int(rng, 1, 40);
    const RandomAxes axes = draw_random_axes(rng, s, false, 3, 10, [&](int, ConvAxis& a) {
      a.kernel = uniform_int(rng, 1, 3);
      a.stride = uniform_int(rng, 1, 2);
      a.pad_begin = uniform_int(rng, 0, a.kernel - 1);
      a.pad_end = uniform_int(rng, 0, a.kernel - 1);
    });
    if (s.h.out < 1 || s.w.out < 1) continue;
    Conv2DRandomCase c = make_conv2d_random_case(rng, s, false, axes);
    if (c.ep.residual) continue;  // the halves route has none (the adapter adds it)
    ASSERT_TRUE(conv2d_trimmed_halves_applies(s, false));
    const std::vector<float> packed = c.packed_weights();
    const std::vector<uint16_t> x = to_halves(c.x);
    const int threads = 1;
    const std::vector<uint16_t> y32 = trimmed_halves(Isa::kNeon, s, packed, x, c.ep, threads);
    const std::vector<uint16_t> y16 = trimmed_halves(Isa::kNeonFp16Arith, s, packed, x, c.ep, threads);
    std::ostringstream what;
    what << "trial " << trial << ": " << s.batch << "x" << s.h.in << "x" << s.w.in << "x" << s.in_channels << " -> " << s.out_channels << " k"
         << s.h.kernel << "x" << s.w.kernel << " s" << s.h.stride << "x" << s.w.stride << " activation " << static_cast<int>(c.ep.activation) << ", "
         << threads << " threads";
    const float e = layer_error(to_floats(y16), to_floats(y32));
    EXPECT_LE(e, kTolerance) << what.str();
    worst_vs_fp32_route = std::max(worst_vs_fp32_route, e);
    worst_half = std::max(worst_half, layer_error(to_floats(y16), c.ref));
    worst_fp32 = std::max(worst_fp32, layer_error(to_floats(y32), c.ref));
    ++layers;
  }
  EXPECT_GT(layers, 15);
  std::printf("trimmed GEMM, %d layers in half arithmetic: worst error %.2e against the fp32-arithmetic route; against fp32 %.2e (half "
              "arithmetic) and %.2e (fp32 arithmetic)\n",
              layers, worst_vs_fp32_route, worst_half, worst_fp32);
}

TEST(Conv2DHalfArithmetic, TrimmedGemmRouteReportsAnFp16BlockPastTheHalfRange) {
  if (!isa_supported(Isa::kNeonFp16Arith)) GTEST_SKIP() << "this CPU or build has no fp16 arithmetic (neonfp16arith)";
  // 1x1, 16 channels of 250s, weights +250 on the first 8 and -250 on the rest: 0 in
  // fp32, past 65504 in the first fp16 block of 8 channels.
  ConvShape s;
  s.in_channels = 16;
  s.out_channels = 8;
  s.h = {8, 1, 1, 1, 0, 0, 8};
  s.w = s.h;
  std::vector<float> w(16 * 8);
  for (int ci = 0; ci < 16; ++ci)
    for (int o = 0; o < 8; ++o) w[static_cast<size_t>(ci * 8 + o)] = ci < 8 ? 250.f : -250.f;
  const std::vector<uint16_t> x = to_halves(std::vector<float>(8 * 8 * 16, 250.f));
  const Epilogue ep;
  bool overflow32 = true, overflow16 = false;
  trimmed_halves(Isa::kNeon, s, w, x, ep, 1, &overflow32);
  trimmed_halves(Isa::kNeonFp16Arith, s, w, x, ep, 1, &overflow16);
  EXPECT_FALSE(overflow32);
  EXPECT_TRUE(overflow16) << "an infinite fp16 block sum is reported, not handed on";
}

ConvShape thin_3x3(int64_t cin, int64_t cout, int64_t side) {
  ConvShape s;
  s.in_channels = cin;
  s.out_channels = cout;
  s.h = {side, 3, 1, 1, 1, 1, side};
  s.w = s.h;
  return s;
}

TEST(Conv2DHalfArithmetic, ThinRouteKeepsWeightsPastTheHalfRangeInFp32) {
  if (!isa_supported(Isa::kNeonFp16Arith)) GTEST_SKIP() << "this CPU or build has no fp16 arithmetic (neonfp16arith)";
  const ConvShape s = thin_3x3(2, 8, 16);
  std::mt19937 rng(7);
  std::vector<float> w = edgegan::testing::random_floats(rng, static_cast<size_t>(2 * 9 * 8), -1e-3f, 1e-3f);
  w[5] = 70000.f;  // rounds to infinity as a half
  const std::vector<uint16_t> x = to_halves(edgegan::testing::random_floats(rng, 16 * 16 * 2, -1e-3f, 1e-3f));
  const Epilogue ep;
  EXPECT_EQ(thin_halves(Isa::kNeonFp16Arith, s, w, x, ep, nullptr, 1), thin_halves(Isa::kNeon, s, w, x, ep, nullptr, 1));
}

TEST(Conv2DHalfArithmetic, ThinRouteReportsAnFp16BlockPastTheHalfRange) {
  if (!isa_supported(Isa::kNeonFp16Arith)) GTEST_SKIP() << "this CPU or build has no fp16 arithmetic (neonfp16arith)";
  // Two channels of 250s, weights +250 on the first and -250 on the second: the sums
  // cancel (0 in fp32), but the fp16 block sum passes 65504 within the first channel's taps.
  const ConvShape s = thin_3x3(2, 8, 16);
  std::vector<float> w(9 * 2 * 8);
  for (int tap = 0; tap < 9; ++tap)
    for (int ci = 0; ci < 2; ++ci)
      for (int o = 0; o < 8; ++o) w[static_cast<size_t>((tap * 2 + ci) * 8 + o)] = ci == 0 ? 250.f : -250.f;
  const std::vector<uint16_t> x = to_halves(std::vector<float>(16 * 16 * 2, 250.f));
  const Epilogue ep;
  bool overflow32 = true, overflow16 = false;
  thin_halves(Isa::kNeon, s, w, x, ep, nullptr, 1, &overflow32);
  thin_halves(Isa::kNeonFp16Arith, s, w, x, ep, nullptr, 1, &overflow16);
  EXPECT_FALSE(overflow32);
  EXPECT_TRUE(overflow16) << "an infinite fp16 block sum is reported, not handed on";
}

}  // namespace
}  // namespace edgegan::cpu

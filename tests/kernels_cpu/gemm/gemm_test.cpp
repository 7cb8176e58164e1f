// The GEMM drivers and every micro-kernel family this CPU can run, against a
// plain double-precision loop: every partial tile (mr < MR, nr < NR), K across
// cache blocks, leading dimensions wider than the rows, all three operand forms.
#include <gtest/gtest.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>

#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/common/epilogue.h"
#include "kernels_cpu/gemm/gemm.h"
#include "kernels_cpu/dot/dot_ukernel.h"
#include "kernels_cpu/gemm/gemm_ukernel.h"
#include "kernels_cpu/common/half.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

// c[i][j] (at i*ldc + j) += sum_p A(i, p) * B(p, j), with A and B given as accessors.
template <typename A, typename B>
std::vector<double> reference_product(int64_t m, int64_t n, int64_t k, A a, B b, const std::vector<float>& c, int64_t ldc) {
  std::vector<double> out(c.begin(), c.end());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += static_cast<double>(a(i, p)) * b(p, j);
      out[static_cast<size_t>(i * ldc + j)] += acc;
    }
  return out;
}

// Largest error per term of the k-term sums (float rounding grows about linearly
// with k here), over the whole C buffer: the padding between rows must come back
// untouched. A lost or doubled term shows up as ~0.1, a rounding slip as ~1e-8.
double scaled_error(const std::vector<float>& got, const std::vector<double>& want, int64_t k) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  return worst / static_cast<double>(k);
}

TEST(GemmUkernel, EveryPartialTileOfEveryFamily) {
  std::mt19937 rng(11);
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    const GemmUkernel& uk = gemm_ukernel(isa);
    SCOPED_TRACE(uk.name);
    EXPECT_EQ(uk.isa, isa);
    for (int mr = 1; mr <= uk.mr; ++mr)
      for (int nr = 1; nr <= uk.nr; ++nr) {
        const int64_t k = uniform_int(rng, 1, 40), ldb = nr + uniform_int(rng, 0, 5), ldc = nr + 3;
        const auto a = random_floats(rng, static_cast<size_t>(mr * k));
        const auto b = random_floats(rng, static_cast<size_t>(k * ldb));
        auto c = random_floats(rng, static_cast<size_t>(mr * ldc));
        std::vector<const float*> rows;
        std::vector<float*> out;
        for (int i = 0; i < mr; ++i) rows.push_back(a.data() + i * k), out.push_back(c.data() + i * ldc);
        const auto want = reference_product(
            mr, nr, k, [&](int64_t i, int64_t p) { return a[static_cast<size_t>(i * k + p)]; },
            [&](int64_t p, int64_t j) { return b[static_cast<size_t>(p * ldb + j)]; }, c, ldc);
        auto c16 = c;
        uk.run(k, mr, nr, rows.data(), b.data(), ldb, out.data());
        ASSERT_LE(scaled_error(c, want, k), 1e-7) << "mr " << mr << " nr " << nr << " k " << k;
        // fp16 B: the same product on B rounded to fp16.
        std::vector<uint16_t> b16(b.size());
        for (size_t i = 0; i < b.size(); ++i) b16[i] = float_to_half(b[i]);
        const auto want16 = reference_product(
            mr, nr, k, [&](int64_t i, int64_t p) { return a[static_cast<size_t>(i * k + p)]; },
            [&](int64_t p, int64_t j) { return half_to_float(b16[static_cast<size_t>(p * ldb + j)]); }, c16, ldc);
        for (int i = 0; i < mr; ++i) out[static_cast<size_t>(i)] = c16.data() + i * ldc;
        uk.run_f16w(k, mr, nr, rows.data(), b16.data(), ldb, out.data());
        // Half-precision arithmetic rounds A and the partial sums to 11 bits.
        const double tol16 = uk.f16w_half_arithmetic ? 4e-3 : 1e-7;
        ASSERT_LE(scaled_error(c16, want16, k), tol16) << "fp16 B: mr " << mr << " nr " << nr << " k " << k;
      }
  }
}

// The fused store (GemmStoreFn) of every family that has one, every partial tile, each
// activation it applies, with and without bias: against a plain
// double-precision loop (the padding beside the tile untouched, the partial sums too),
// and bit for bit the same as the two-pass way a caller stores other tiles: the
// fused store back into the partial sums with no epilogue, then store_with_epilogue.
TEST(GemmUkernel, FusedStoreMatchesReferenceAndItsTwoPassForm) {
  std::mt19937 rng(12);
  int families = 0;
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa) || gemm_ukernel(isa).run_store == nullptr) continue;
    const GemmUkernel& uk = gemm_ukernel(isa);
    SCOPED_TRACE(uk.name);
    ++families;
    for (int mr = 1; mr <= uk.mr; ++mr)
      for (int nr = 1; nr <= uk.nr; ++nr)
        for (Activation act : {Activation::kNone, Activation::kRelu, Activation::kLeakyRelu}) {
            const int64_t k = uniform_int(rng, 1, 40), ldb = nr + uniform_int(rng, 0, 5), ld = nr + 3;
            const auto a = random_floats(rng, static_cast<size_t>(mr * k));
            const auto b = random_floats(rng, static_cast<size_t>(k * ldb));
            const auto partial = random_floats(rng, static_cast<size_t>(mr * ld));
            const auto bias = random_floats(rng, static_cast<size_t>(nr));
            const bool with_bias = uniform_int(rng, 0, 1) == 1;
            const Epilogue ep{with_bias ? bias.data() : nullptr, act, 0.2f};
            auto run_store = [&](const std::vector<float>& c, std::vector<float>& out, const Epilogue& e) {
              std::vector<const float*> a_rows, c_rows;
              std::vector<float*> out_rows;
              for (int i = 0; i < mr; ++i)
                a_rows.push_back(a.data() + i * k), c_rows.push_back(c.data() + i * ld), out_rows.push_back(out.data() + i * ld);
              uk.run_store(k, mr, nr, a_rows.data(), b.data(), ldb, c_rows.data(), out_rows.data(), e);
            };
            const std::string where = "mr " + std::to_string(mr) + " nr " + std::to_string(nr) + " k " + std::to_string(k) +
                                      " activation " + std::to_string(static_cast<int>(act)) + (with_bias ? " bias" : "");
            // One pass, to separate output rows.
            std::vector<float> got(static_cast<size_t>(mr * ld), -7.f);
            run_store(partial, got, ep);
            auto want = reference_product(
                mr, nr, k, [&](int64_t i, int64_t p) { return a[static_cast<size_t>(i * k + p)]; },
                [&](int64_t p, int64_t j) { return b[static_cast<size_t>(p * ldb + j)]; },
                partial, ld);
            for (int64_t i = 0; i < mr; ++i)
              for (int64_t j = 0; j < ld; ++j) {
                double& w = want[static_cast<size_t>(i * ld + j)];
                w = j < nr ? activate(static_cast<float>(w + (with_bias ? bias[static_cast<size_t>(j)] : 0.0)), act, 0.2f) : -7.0;
              }
            ASSERT_LE(scaled_error(got, want, k + 2), 1e-7) << where;  // + the partial sum and the bias
            // Two passes: the sums back into (a copy of) the partial sums, then stored.
            auto sums = partial;
            run_store(sums, sums, Epilogue{});
            std::vector<float> packed, two_pass(static_cast<size_t>(mr * ld), -7.f);
            std::vector<float*> rows;
            for (int i = 0; i < mr; ++i) {
              packed.insert(packed.end(), sums.begin() + i * ld, sums.begin() + i * ld + nr);
              rows.push_back(two_pass.data() + i * ld);
              ASSERT_TRUE(std::equal(sums.begin() + i * ld + nr, sums.begin() + (i + 1) * ld, partial.begin() + i * ld + nr)) << where;
            }
            store_with_epilogue(packed.data(), mr, nr, rows.data(), ep.bias, act, ep.alpha);
            for (size_t i = 0; i < got.size(); ++i)
              ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(two_pass[i])) << "at " << i << ": " << where;
          }
  }
  if (families == 0) GTEST_SKIP() << "no kernel family with a fused store on this CPU";
}

// gemm_store_rows on every family and every activation: fused where the family has
// the store and it applies the activation, in passes elsewhere (the families without
// it, tanh and sigmoid on all). Against a plain double-precision loop, to separate
// output rows and in place (out_rows = c_rows), with and without bias.
TEST(GemmStoreRows, EveryFamilyAndActivationMatchesTheReference) {
  std::mt19937 rng(13);
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    ScopedIsa forced(isa);
    SCOPED_TRACE(gemm_ukernel().name);
    for (Activation act : {Activation::kNone, Activation::kRelu, Activation::kLeakyRelu, Activation::kTanh, Activation::kSigmoid})
      for (int trial = 0; trial < 12; ++trial) {
        const int64_t m = uniform_int(rng, 1, 20), n = uniform_int(rng, 1, 70), k = uniform_int(rng, 1, 40);
        const int64_t ldb = n + uniform_int(rng, 0, 5), ld = n + 3;
        const auto a = random_floats(rng, static_cast<size_t>(m * k));
        const auto b = random_floats(rng, static_cast<size_t>(k * ldb));
        const auto partial = random_floats(rng, static_cast<size_t>(m * ld));
        const auto bias = random_floats(rng, static_cast<size_t>(n));
        const bool with_bias = trial % 2 == 1, in_place = trial % 4 >= 2;
        const Epilogue ep{with_bias ? bias.data() : nullptr, act, 0.2f};
        auto c = partial;
        std::vector<float> out(static_cast<size_t>(m * ld), -7.f);
        std::vector<const float*> a_rows, c_rows;
        std::vector<float*> out_rows;
        for (int64_t i = 0; i < m; ++i) {
          a_rows.push_back(a.data() + i * k);
          c_rows.push_back(c.data() + i * ld);
          out_rows.push_back((in_place ? c.data() : out.data()) + i * ld);
        }
        gemm_store_rows(m, n, k, a_rows.data(), b.data(), ldb, c_rows.data(), out_rows.data(), ep);
        auto want = reference_product(
            m, n, k, [&](int64_t i, int64_t p) { return a[static_cast<size_t>(i * k + p)]; },
            [&](int64_t p, int64_t j) { return b[static_cast<size_t>(p * ldb + j)]; }, partial, ld);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < ld; ++j) {
            double& w = want[static_cast<size_t>(i * ld + j)];
            if (j < n) {
              w = activate(static_cast<float>(w + (with_bias ? bias[static_cast<size_t>(j)] : 0.0)), act, 0.2f);
            } else if (!in_place) {
              w = -7.0;  // the padding beside the rows untouched
            }
          }
        const std::string where = "m " + std::to_string(m) + " n " + std::to_string(n) + " k " + std::to_string(k) +
                                  " activation " + std::to_string(static_cast<int>(act)) + (with_bias ? " bias" : "") +
                                  (in_place ? " in place" : "");
        ASSERT_LE(scaled_error(in_place ? c : out, want, k + 2), 1e-7) << where;  // + the partial sum and the bias
        if (!in_place) {
          ASSERT_EQ(c, partial) << "the partial sums changed: " << where;
        }
      }
  }
}

// Half precision: every half widens to the float it denotes, and every float
// rounds to the nearest half (ties to even), as the hardware converters do.
TEST(Half, RoundTripsAndRoundsToNearestEven) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f)))) << h;
      continue;
    }
    ASSERT_EQ(float_to_half(f), h) << "half " << h << " -> " << f;
  }
  EXPECT_EQ(half_to_float(0x3C00), 1.f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.f, -24));  // smallest subnormal
  EXPECT_EQ(half_to_float(0x7BFF), 65504.f);
  EXPECT_EQ(float_to_half(65520.f), 0x7C00);                    // rounds past the largest half: inf
  EXPECT_EQ(float_to_half(1.f + std::ldexp(1.f, -11)), 0x3C00);  // tie, to even (down)
  EXPECT_EQ(float_to_half(1.f + 3 * std::ldexp(1.f, -11)), 0x3C02);  // tie, to even (up)
  EXPECT_EQ(float_to_half(std::ldexp(1.f, -25)), 0x0000);        // tie at the bottom, to even (zero)
  EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_half(-0.f), 0x8000);
}

// The narrow-output dot kernels (RGB / grey heads): every mr x nr up to the tile,
// several taps, k with and without a vector remainder, rows lda apart.
TEST(DotUkernel, EveryPartialTileOfEveryFamily) {
  std::mt19937 rng(13);
  int families = 0;
  std::vector<DotUkernelFn> tested;
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa) || dot_ukernel(isa).run == nullptr) continue;
    const DotUkernel& uk = dot_ukernel(isa);
    SCOPED_TRACE(uk.name);
    EXPECT_EQ(uk.isa, isa);
    // neonfp16arith runs the NEON dot kernel: test each function once.
    if (std::find(tested.begin(), tested.end(), uk.run) != tested.end()) continue;
    tested.push_back(uk.run);
    ++families;
    // Any mr: a whole run of pixels is one call, so past MR the kernel loops its tiles.
    for (int mr = 1; mr <= 2 * uk.mr + 1; ++mr)
      for (int nr = 1; nr <= kDotMaxColumns; ++nr)
        for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{4}, int64_t{17}, static_cast<int64_t>(uniform_int(rng, 5, 70))}) {
          const int taps = static_cast<int>(uniform_int(rng, 1, 5));
          const int64_t lda = k + uniform_int(rng, 0, 6), ldc = nr + 2;
          std::vector<std::vector<float>> a(static_cast<size_t>(taps)), bt(static_cast<size_t>(taps));
          std::vector<const float*> a_rows, bt_rows;
          for (int t = 0; t < taps; ++t) {
            a[static_cast<size_t>(t)] = random_floats(rng, static_cast<size_t>((mr - 1) * lda + k));
            bt[static_cast<size_t>(t)] = random_floats(rng, static_cast<size_t>(nr * k));
            a_rows.push_back(a[static_cast<size_t>(t)].data());
            bt_rows.push_back(bt[static_cast<size_t>(t)].data());
          }
          auto c = random_floats(rng, static_cast<size_t>(mr * ldc));
          std::vector<double> want(c.begin(), c.end());
          for (int i = 0; i < mr; ++i)
            for (int j = 0; j < nr; ++j)
              for (int t = 0; t < taps; ++t)
                for (int64_t p = 0; p < k; ++p)
                  want[static_cast<size_t>(i * ldc + j)] += static_cast<double>(a[static_cast<size_t>(t)][static_cast<size_t>(i * lda + p)]) *
                                                            bt[static_cast<size_t>(t)][static_cast<size_t>(j * k + p)];
          uk.run(k, taps, mr, nr, a_rows.data(), lda, bt_rows.data(), c.data(), ldc);
          ASSERT_LE(scaled_error(c, want, k * taps), 1e-7) << "mr " << mr << " nr " << nr << " k " << k << " taps " << taps;
        }
  }
  if (families == 0) GTEST_SKIP() << "no kernel family with a dot kernel on this CPU";
}

TEST(Gemm, DriversMatchReferenceOnRandomShapesForEveryFamily) {
  std::mt19937 rng(12);
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    SCOPED_TRACE(isa_name(isa));
    ScopedIsa forced(isa);
    for (int trial = 0; trial < 60; ++trial) {
      const int64_t m = uniform_int(rng, 1, 70), n = uniform_int(rng, 1, 80), k = uniform_int(rng, 1, trial % 4 == 0 ? 600 : 40);
      const int64_t lda = k + uniform_int(rng, 0, 3), ldb = n + uniform_int(rng, 0, 3), ldc = n + uniform_int(rng, 0, 3);
      SCOPED_TRACE(::testing::Message() << "m " << m << " n " << n << " k " << k);
      const auto c0 = random_floats(rng, static_cast<size_t>(m * ldc));
      {  // C += A B
        const auto a = random_floats(rng, static_cast<size_t>(m * lda)), b = random_floats(rng, static_cast<size_t>(k * ldb));
        const auto want = reference_product(
            m, n, k, [&](int64_t i, int64_t p) { return a[static_cast<size_t>(i * lda + p)]; },
            [&](int64_t p, int64_t j) { return b[static_cast<size_t>(p * ldb + j)]; }, c0, ldc);
        auto c = c0;
        gemm_accumulate(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
        ASSERT_LE(scaled_error(c, want, k), 1e-7) << "gemm_accumulate";
      }
      {  // C += Aᵀ B, A stored k x m
        const int64_t lda_t = m + uniform_int(rng, 0, 3);
        const auto a = random_floats(rng, static_cast<size_t>(k * lda_t)), b = random_floats(rng, static_cast<size_t>(k * ldb));
        const auto want = reference_product(
            m, n, k, [&](int64_t i, int64_t p) { return a[static_cast<size_t>(p * lda_t + i)]; },
            [&](int64_t p, int64_t j) { return b[static_cast<size_t>(p * ldb + j)]; }, c0, ldc);
        auto c = c0;
        gemm_accumulate_at(m, n, k, a.data(), lda_t, b.data(), ldb, c.data(), ldc);
        ASSERT_LE(scaled_error(c, want, k), 1e-7) << "gemm_accumulate_at";
      }
      {  // C += A Bᵀ, B stored n x k
        const int64_t ldb_t = k + uniform_int(rng, 0, 3);
        const auto a = random_floats(rng, static_cast<size_t>(m * lda)), b = random_floats(rng, static_cast<size_t>(n * ldb_t));
        const auto want = reference_product(
            m, n, k, [&](int64_t i, int64_t p) { return a[static_cast<size_t>(i * lda + p)]; },
            [&](int64_t p, int64_t j) { return b[static_cast<size_t>(j * ldb_t + p)]; }, c0, ldc);
        auto c = c0;
        gemm_accumulate_bt(m, n, k, a.data(), lda, b.data(), ldb_t, c.data(), ldc);
        ASSERT_LE(scaled_error(c, want, k), 1e-7) << "gemm_accumulate_bt";
      }
    }
  }
}

// The dispatcher: the active family is the widest this CPU has unless
// EDGEGAN_ISA names one, and the GEMM then runs that family's kernel.
TEST(CpuIsa, ActiveFamilyFollowsCpuidOrEnvironment) {
  const char* env = std::getenv("EDGEGAN_ISA");
  const Isa expected = env && *env ? parse_isa(env) : detected_isa();
  EXPECT_EQ(active_isa(), expected);
  EXPECT_EQ(gemm_ukernel().isa, expected);
  EXPECT_TRUE(isa_supported(Isa::kScalar));
  EXPECT_THROW(parse_isa("sse9"), std::invalid_argument);
#if defined(__x86_64__)
  // On x86-64 the SIMD families are built in; which the CPU runs is CPUID's call.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;  // F16C from CPUID (clang's __builtin_cpu_supports lacks it)
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  EXPECT_EQ(isa_supported(Isa::kAvx2), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c);
  EXPECT_EQ(isa_supported(Isa::kAvx512), static_cast<bool>(__builtin_cpu_supports("avx512f")));
  EXPECT_FALSE(isa_supported(Isa::kNeon));
  EXPECT_FALSE(isa_supported(Isa::kNeonFp16Arith));
#elif defined(__aarch64__)
  // On AArch64 the NEON family is always built in and always what runs unless
  // EDGEGAN_ISA says otherwise: the scalar fallback must not be what ships. With
  // EDGEGAN_NEON_FP16_ARITH, CPUs with the FP16 extension get neonfp16arith.
  EXPECT_TRUE(isa_supported(Isa::kNeon));
  EXPECT_EQ(detected_isa(), isa_supported(Isa::kNeonFp16Arith) ? Isa::kNeonFp16Arith : Isa::kNeon);
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
  EXPECT_STREQ(gemm_ukernel(Isa::kNeonFp16Arith).name, "gemm_ukernel_8x8__neonfp16arith");
  EXPECT_TRUE(gemm_ukernel(Isa::kNeonFp16Arith).f16w_half_arithmetic);
#else
  EXPECT_FALSE(isa_supported(Isa::kNeonFp16Arith));
#endif
  EXPECT_STREQ(gemm_ukernel(Isa::kNeon).name, "gemm_ukernel_8x8__neon");
  EXPECT_STREQ(dot_ukernel(Isa::kNeon).name, "dot_ukernel_4x4__neon");
  EXPECT_FALSE(isa_supported(Isa::kAvx2));
  EXPECT_FALSE(isa_supported(Isa::kAvx512));
#endif
}

TEST(CpuIsa, ScopedIsaForcesAndRestores) {
  const Isa before = active_isa();
  {
    ScopedIsa forced(Isa::kScalar);
    EXPECT_EQ(active_isa(), Isa::kScalar);
    EXPECT_STREQ(gemm_ukernel().name, "gemm_ukernel_4x16__scalar");
  }
  EXPECT_EQ(active_isa(), before);
}

}  // namespace
}  // namespace edgegan::cpu

// The GEMM drivers and every micro-kernel family this CPU can run, against a
// plain double-precision loop: every partial tile (mr < MR, nr < NR), K across
// cache blocks, leading dimensions wider than the rows, all three operand forms.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels_cpu/cpu_isa.h"
#include "kernels_cpu/gemm.h"
#include "kernels_cpu/gemm_microkernel.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

constexpr Isa kAllIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};

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

TEST(GemmMicrokernel, EveryPartialTileOfEveryFamily) {
  std::mt19937 rng(11);
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    const GemmMicrokernel& uk = gemm_microkernel(isa);
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
        uk.run(k, mr, nr, rows.data(), b.data(), ldb, out.data());
        ASSERT_LE(scaled_error(c, want, k), 1e-7) << "mr " << mr << " nr " << nr << " k " << k;
      }
  }
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
  EXPECT_EQ(gemm_microkernel().isa, expected);
  EXPECT_TRUE(isa_supported(Isa::kScalar));
  EXPECT_THROW(parse_isa("sse9"), std::invalid_argument);
#if defined(__x86_64__)
  // On x86-64 the SIMD families are built in; which the CPU runs is CPUID's call.
  EXPECT_EQ(isa_supported(Isa::kAvx2), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
  EXPECT_EQ(isa_supported(Isa::kAvx512), static_cast<bool>(__builtin_cpu_supports("avx512f")));
#endif
}

TEST(CpuIsa, ScopedIsaForcesAndRestores) {
  const Isa before = active_isa();
  {
    ScopedIsa forced(Isa::kScalar);
    EXPECT_EQ(active_isa(), Isa::kScalar);
    EXPECT_STREQ(gemm_microkernel().name, "gemm_ukernel_4x16__scalar");
  }
  EXPECT_EQ(active_isa(), before);
}

}  // namespace
}  // namespace edgegan::cpu

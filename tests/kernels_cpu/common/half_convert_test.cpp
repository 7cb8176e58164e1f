// The half <-> float runs of every family this CPU has, against half.h's scalar
// functions: every one of the 65536 halves widened, floats narrowed (random bits over
// the whole range, rounding ties, subnormals, the edge of the half range, infinities,
// NaN), and the overflow flag (a finite float past 65504 and nothing else), in a vector
// body and in a tail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels_common/half.h"
#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/common/half_convert.h"

namespace edgegan::cpu {
namespace {

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

bool half_is_nan(uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }

std::vector<Isa> supported_isas() {
  std::vector<Isa> isas;
  for (Isa isa : kAllIsas)
    if (isa_supported(isa)) isas.push_back(isa);
  return isas;
}

TEST(HalfConvert, EveryHalfWidensExactlyOnEveryFamily) {
  std::vector<uint16_t> all(65536 + 5);  // + a tail past the vector width
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(isa_name(isa));
    std::vector<float> y(all.size());
    widen_halves(isa, all.data(), y.data(), static_cast<int64_t>(all.size()));
    for (size_t i = 0; i < all.size(); ++i) {
      const float want = kernels::half_to_float(all[i]);
      if (half_is_nan(all[i])) {
        EXPECT_TRUE(std::isnan(y[i])) << i;
      } else {
        ASSERT_EQ(bits_of(y[i]), bits_of(want)) << "half 0x" << std::hex << all[i];
        // and back: every non-NaN half is a float that narrows to itself
        EXPECT_EQ(kernels::float_to_half(y[i]), all[i]);
      }
    }
  }
}

// Values whose halves are known: ties to even, subnormals, the range's edge.
TEST(HalfConvert, NarrowingRoundsToNearestEvenAndSaturatesToInfinity) {
  const float ulp1 = std::ldexp(1.f, -10);     // a half's step at 1.0
  const float sub = std::ldexp(1.f, -24);      // the smallest half subnormal
  const struct {
    float x;
    uint16_t half;
  } cases[] = {
      {1.f, 0x3C00},
      {1.f + ulp1 / 2, 0x3C00},              // tie: down to the even 1.0
      {1.f + 3 * ulp1 / 2, 0x3C02},          // tie: up to the even 1+2ulp
      {1.f + ulp1 / 2 + ulp1 / 1024, 0x3C01},  // past the tie
      {-2.5f, 0xC100},
      {sub, 0x0001},
      {sub / 2, 0x0000},                     // tie: down to the even 0
      {3 * sub / 2, 0x0002},                 // tie: up to the even 2
      {-sub * 1023, 0x83FF},                 // the largest subnormal
      {std::ldexp(1.f, -14), 0x0400},        // the smallest normal
      {std::ldexp(1.f, -30), 0x0000},        // far below: zero
      {std::numeric_limits<float>::denorm_min(), 0x0000},
      {65504.f, 0x7BFF},
      {65519.f, 0x7BFF},                     // below the midpoint to 65536: the largest half
      {65520.f, 0x7C00},                     // the midpoint rounds to even: infinity
      {-1e10f, 0xFC00},
      {std::numeric_limits<float>::infinity(), 0x7C00},
      {-std::numeric_limits<float>::infinity(), 0xFC00},
      {-0.f, 0x8000},
  };
  std::vector<float> x;
  for (const auto& c : cases) x.push_back(c.x);
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(isa_name(isa));
    std::vector<uint16_t> y(x.size());
    narrow_to_halves(isa, x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], cases[i].half) << "x = " << x[i] << " (case " << i << ")";
    // NaN stays NaN, quiet or signalling, in the body and the tail
    std::vector<float> nans(11, std::numeric_limits<float>::quiet_NaN());
    nans[3] = from_bits(0x7F800001u);
    nans[9] = from_bits(0xFFC00123u);
    std::vector<uint16_t> h(nans.size());
    EXPECT_FALSE(narrow_to_halves(isa, nans.data(), h.data(), static_cast<int64_t>(h.size()))) << "NaN is not an overflow";
    for (uint16_t v : h) EXPECT_TRUE(half_is_nan(v)) << std::hex << v;
  }
}

TEST(HalfConvert, RandomFloatsNarrowAsTheScalarFunctionOnEveryFamily) {
  std::mt19937 rng(54);
  std::vector<float> x(4099);
  for (size_t i = 0; i < x.size(); ++i) {
    if (i % 3 == 0) {
      x[i] = from_bits(static_cast<uint32_t>(rng()));  // any float: NaN, inf, subnormal, huge
    } else {
      // exponents around the half range (2^-26 .. 2^17), mantissas with ties common
      const uint32_t exponent = 101 + rng() % 43, mantissa = (rng() % 4 == 0) ? (rng() % 1024) << 13 | 0x1000u : rng() & 0x7FFFFFu;
      x[i] = from_bits((rng() & 0x80000000u) | exponent << 23 | mantissa);
    }
  }
  std::vector<uint16_t> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = kernels::float_to_half(x[i]);
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(isa_name(isa));
    std::vector<uint16_t> got(x.size());
    narrow_to_halves(isa, x.data(), got.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) {
        EXPECT_TRUE(half_is_nan(got[i]));
      } else {
        ASSERT_EQ(got[i], want[i]) << "x bits 0x" << std::hex << bits_of(x[i]);
      }
    }
  }
}

TEST(HalfConvert, OverflowIsFlaggedOnlyForFiniteFloatsPastTheHalfRange) {
  const float inf = std::numeric_limits<float>::infinity();
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(isa_name(isa));
    for (size_t at : {size_t{2}, size_t{17}}) {  // in the vector body; in the tail of 19
      std::vector<float> x(19, 0.5f);
      std::vector<uint16_t> y(x.size());
      EXPECT_FALSE(narrow_to_halves(isa, x.data(), y.data(), 19));
      x[at] = 65519.f;
      EXPECT_FALSE(narrow_to_halves(isa, x.data(), y.data(), 19)) << "65519 rounds to 65504";
      x[at] = inf;
      EXPECT_FALSE(narrow_to_halves(isa, x.data(), y.data(), 19)) << "an infinity was one already";
      x[at] = -65520.f;
      EXPECT_TRUE(narrow_to_halves(isa, x.data(), y.data(), 19)) << at;
      EXPECT_EQ(y[at], 0xFC00);
      x[at] = std::numeric_limits<float>::max();
      EXPECT_TRUE(narrow_to_halves(isa, x.data(), y.data(), 19)) << at;
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu

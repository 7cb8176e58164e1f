// matmul: the fast forward against the double reference over random batched shapes in
// every stride form the engine makes (rank-3 row-major, rank-4 NHWC, broadcast second
// batch dim, transposed operands on the GEMM drivers' Aᵀ and Bᵀ paths) at 1 and 2
// threads; the backward of each operand against the exact product forms.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels_cpu/matmul/matmul.h"
#include "tests/test_util.h"

namespace edgegan::cpu {
namespace {

using edgegan::testing::random_floats;
using edgegan::testing::uniform_int;

// One operand of logical [b0, b1, rows, cols] in one of four storage forms, with its
// element count; broadcast1: its b1 is 1.
struct Operand {
  MatrixStrides s;
  int64_t size = 0;
};
Operand operand(std::mt19937& rng, int64_t b0, int64_t b1, int64_t rows, int64_t cols, bool broadcast1, int form) {
  const int64_t d1 = broadcast1 ? 1 : b1;
  Operand o;
  o.size = b0 * d1 * rows * cols;
  switch (form) {
    case 0: o.s = {{d1 * rows * cols, rows * cols}, cols, 1}; break;     // row-major
    case 1: o.s = {{d1 * rows * cols, rows * cols}, 1, rows}; break;     // transposed (columns contiguous)
    case 2: o.s = {{d1 * rows * cols, 1}, cols * d1, d1}; break;         // NHWC [b0, rows, cols, d1]
    default: {                                                           // padded rows
      const int64_t ld = cols + uniform_int(rng, 1, 3);
      o.s = {{d1 * rows * ld, rows * ld}, ld, 1};
      o.size = b0 * d1 * rows * ld;
    }
  }
  if (broadcast1) o.s.batch[1] = 0;
  return o;
}

MatMulShape random_shape(std::mt19937& rng, int trial, int64_t& na, int64_t& nb, int64_t& ny) {
  MatMulShape s;
  s.batch[0] = uniform_int(rng, 1, 3);
  s.batch[1] = uniform_int(rng, 1, 3);
  s.m = uniform_int(rng, 1, 40), s.n = uniform_int(rng, 1, 40), s.k = uniform_int(rng, 1, 70);
  const Operand a = operand(rng, s.batch[0], s.batch[1], s.m, s.k, trial % 5 == 1, trial % 4);
  const Operand b = operand(rng, s.batch[0], s.batch[1], s.k, s.n, trial % 5 == 2, (trial / 4) % 4);
  const Operand y = operand(rng, s.batch[0], s.batch[1], s.m, s.n, false, (trial / 16) % 2 ? 2 : 0);
  s.a = a.s, s.b = b.s, s.y = y.s;
  na = a.size, nb = b.size, ny = y.size;
  return s;
}

TEST(MatMul, FastMatchesReference) {
  std::mt19937 rng(57);
  for (int trial = 0; trial < 160; ++trial) {
    int64_t na, nb, ny;
    const MatMulShape s = random_shape(rng, trial, na, nb, ny);
    const std::vector<float> a = random_floats(rng, static_cast<size_t>(na)), b = random_floats(rng, static_cast<size_t>(nb));
    std::vector<float> want(static_cast<size_t>(ny), 7.f);
    matmul_reference(s, a.data(), b.data(), want.data());
    for (int threads : {1, 2}) {
      std::vector<float> got(static_cast<size_t>(ny), 7.f);  // gaps between strided rows stay untouched
      matmul(s, a.data(), b.data(), got.data(), threads);
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5f * std::sqrt(static_cast<float>(s.k))) << "trial " << trial;
    }
  }
}

TEST(MatMul, BackwardMatchesTheProductForms) {
  std::mt19937 rng(58);
  for (int trial = 0; trial < 80; ++trial) {
    int64_t na, nb, ny;
    const MatMulShape s = random_shape(rng, trial, na, nb, ny);
    const std::vector<float> a = random_floats(rng, static_cast<size_t>(na)), b = random_floats(rng, static_cast<size_t>(nb)),
                             dy = random_floats(rng, static_cast<size_t>(ny));
    // loss = sum(y * dy) is linear in each operand: its gradient w.r.t. a[i] is the loss
    // of the product with a = e_i, exactly.
    auto loss_with = [&](const std::vector<float>& va, const std::vector<float>& vb) {
      std::vector<float> y(static_cast<size_t>(ny), 0.f);
      matmul_reference(s, va.data(), vb.data(), y.data());
      double l = 0;
      for (size_t i = 0; i < y.size(); ++i) l += static_cast<double>(y[i]) * dy[i];
      return l;
    };
    for (int which : {0, 1}) {
      const std::vector<float>& v = which == 0 ? a : b;
      std::vector<float> d(v.size(), 0.25f);
      matmul_backward(s, which, a.data(), b.data(), dy.data(), d.data(), true, 2);
      std::vector<float> unit(v.size(), 0.f);
      for (size_t i = 0; i < v.size(); i += 1 + v.size() / 60) {
        unit[i] = 1.f;
        const double want = which == 0 ? loss_with(unit, b) : loss_with(a, unit);
        unit[i] = 0.f;
        // Padding between rows gets no gradient (it is read by nothing).
        ASSERT_NEAR(d[i], 0.25 + want, 1e-4) << "trial " << trial << " operand " << which << " i " << i;
      }
    }
  }
}

}  // namespace
}  // namespace edgegan::cpu

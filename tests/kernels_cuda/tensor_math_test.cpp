// The CUDA run-time math kernels (UnaryMath, Reduce, Softmax, MatMul, Transpose) against
// the CPU references over random shapes: the same strided forms the engine makes.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "kernels_cpu/matmul/matmul.h"
#include "kernels_cpu/reduce/reduce.h"
#include "kernels_cpu/softmax/softmax.h"
#include "kernels_cpu/transpose/transpose.h"
#include "kernels_cpu/unary_math/unary_math.h"
#include "kernels_cuda/matmul/matmul.h"
#include "kernels_cuda/reduce/reduce.h"
#include "kernels_cuda/softmax/softmax.h"
#include "kernels_cuda/transpose/transpose.h"
#include "kernels_cuda/unary_math/unary_math.h"
#include "tests/kernels_cuda/data_op_test_util.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::uniform_int;

TEST(CudaUnaryMath, MatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(71);
  for (int op = 0; op < cpu::kUnaryMathOpCount; ++op)
    for (float e : {2.f, 0.5f, 3.f}) {
      const size_t n = static_cast<size_t>(uniform_int(rng, 1, 5000));
      const auto x = testing::random_floats(rng, n, 0.1f, 3.f);
      std::vector<float> want(n);
      cpu::unary_math_reference(static_cast<int64_t>(n), static_cast<cpu::UnaryMathOp>(op), e, x.data(), want.data());
      Device<float> dx(x), dy(testing::nan_filled(n));
      cuda::unary_math(static_cast<int64_t>(n), static_cast<cpu::UnaryMathOp>(op), e, dx.get(), dy.get(), nullptr);
      EXPECT_TRUE(testing::all_close(testing::result_of(dy, n), want, 3e-5f)) << "op " << op;  // a few ulps of values up to 27
    }
}

TEST(CudaReduce, MatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(72);
  for (int trial = 0; trial < 200; ++trial) {
    cpu::ReduceShape s;
    s.rank = uniform_int(rng, 2, 5);
    for (int k = 0; k < s.rank; ++k) s.dims[k] = uniform_int(rng, 1, 8), s.reduced[k] = k > 0 && uniform_int(rng, 0, 1);
    s.reduced[s.rank - 1] = s.reduced[s.rank - 1] || trial % 2;
    const auto op = static_cast<cpu::ReduceOp>(trial % 4);
    const auto x = testing::random_floats(rng, static_cast<size_t>(cpu::reduce_input_elements(s)));
    const size_t n = static_cast<size_t>(cpu::reduce_output_elements(s));
    std::vector<float> want(n);
    cpu::reduce_reference(s, op, x.data(), want.data());
    Device<float> dx(x), dy(testing::nan_filled(n));
    cuda::reduce(s, op, dx.get(), dy.get(), nullptr);
    // Float sums of up to 4096 values against double ones.
    EXPECT_TRUE(testing::all_close(testing::result_of(dy, n), want, 2e-4f)) << "trial " << trial;
  }
}

TEST(CudaSoftmax, MatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(73);
  for (int trial = 0; trial < 100; ++trial) {
    const cpu::SoftmaxShape s{uniform_int(rng, 1, 5), uniform_int(rng, 1, 60), uniform_int(rng, 1, 9)};
    const size_t n = static_cast<size_t>(s.outer * s.axis * s.inner);
    const auto x = testing::random_floats(rng, n, -5.f, 5.f);
    std::vector<float> want(n);
    cpu::softmax_reference(s, x.data(), want.data());
    Device<float> dx(x), dy(testing::nan_filled(n));
    cuda::softmax(s, dx.get(), dy.get(), nullptr);
    EXPECT_TRUE(testing::all_close(testing::result_of(dy, n), want, 1e-6f)) << "trial " << trial;
  }
}

TEST(CudaMatMul, MatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(74);
  for (int trial = 0; trial < 60; ++trial) {
    cpu::MatMulShape s;
    s.batch[0] = uniform_int(rng, 1, 3), s.batch[1] = uniform_int(rng, 1, 3);
    s.m = uniform_int(rng, 1, 40), s.n = uniform_int(rng, 1, 40), s.k = uniform_int(rng, 1, 50);
    const bool nhwc = trial % 2;  // rank-4 NHWC strides, or row-major matrices
    const int64_t b1 = s.batch[1];
    auto strides = [&](int64_t rows, int64_t cols, bool broadcast) {
      const int64_t d1 = broadcast ? 1 : b1;
      cpu::MatrixStrides m = nhwc ? cpu::MatrixStrides{{rows * cols * d1, 1}, cols * d1, d1} : cpu::MatrixStrides{{d1 * rows * cols, rows * cols}, cols, 1};
      if (broadcast) m.batch[1] = 0;
      return m;
    };
    s.a = strides(s.m, s.k, trial % 3 == 1);
    s.b = strides(s.k, s.n, trial % 3 == 2);
    s.y = strides(s.m, s.n, false);
    const size_t na = static_cast<size_t>(s.batch[0] * b1 * s.m * s.k), nb = static_cast<size_t>(s.batch[0] * b1 * s.k * s.n),
                 ny = static_cast<size_t>(s.batch[0] * b1 * s.m * s.n);
    const auto a = testing::random_floats(rng, na), b = testing::random_floats(rng, nb);
    std::vector<float> want(ny);
    cpu::matmul_reference(s, a.data(), b.data(), want.data());
    Device<float> da(a), db(b), dy(testing::nan_filled(ny));
    cuda::matmul(s, da.get(), db.get(), dy.get(), nullptr);
    EXPECT_TRUE(testing::all_close(testing::result_of(dy, ny), want, 1e-5f)) << "trial " << trial;
  }
}

TEST(CudaTranspose, EqualsTheCpuReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(75);
  for (int trial = 0; trial < 100; ++trial) {
    cpu::TransposeShape s;
    s.rank = uniform_int(rng, 1, 6);
    for (int k = 0; k < s.rank; ++k) s.in[k] = uniform_int(rng, 1, 6);
    std::iota(s.perm, s.perm + s.rank, 0);
    std::shuffle(s.perm + 1, s.perm + s.rank, rng);
    const size_t n = static_cast<size_t>(cpu::transpose_elements(s));
    const auto x = testing::random_floats(rng, n);
    std::vector<float> want(n);
    cpu::transpose_reference(s, x.data(), want.data());
    Device<float> dx(x), dy(testing::nan_filled(n));
    cuda::transpose(s, dx.get(), dy.get(), nullptr);
    EXPECT_TRUE(testing::all_close(testing::result_of(dy, n), want, 0.f)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace edgegan

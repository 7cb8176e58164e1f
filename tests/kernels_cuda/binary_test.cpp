// The CUDA Binary against the CPU reference: every operation over random broadcasts of
// ranks 1..8 (the equal-shape residual add, per-channel and per-sample operands,
// scalars, both sides broadcast), and in place over the full-shape operand.
#include <gtest/gtest.h>

#include "kernels_cpu/binary/binary.h"
#include "kernels_cuda/binary/binary.h"
#include "tests/kernels_cuda/data_op_test_util.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::uniform_int;

cpu::BinaryShape random_shape(std::mt19937& rng, int trial) {
  cpu::BinaryShape s;
  s.rank = uniform_int(rng, 1, cpu::kBinaryMaxRank);
  const int max_dim = s.rank > 5 ? 3 : 7;
  for (int k = 0; k < s.rank; ++k) {
    const int64_t d = uniform_int(rng, 1, max_dim);
    // trial % 3: both full (no broadcast), b broadcast, either broadcast
    const bool a_full = trial % 3 != 2 || uniform_int(rng, 0, 2) != 0;
    const bool b_full = trial % 3 == 0 || uniform_int(rng, 0, 2) == 0;
    s.a[k] = a_full ? d : 1;
    s.b[k] = b_full ? d : 1;
    s.out[k] = std::max(s.a[k], s.b[k]);
  }
  return s;
}

TEST(CudaBinary, MatchesTheCpuReferenceOverBroadcasts) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(33);
  for (int trial = 0; trial < 240; ++trial) {
    const cpu::BinaryShape s = random_shape(rng, trial);
    const auto op = static_cast<cpu::BinaryOp>(trial % 4);
    const auto a = testing::random_floats(rng, static_cast<size_t>(cpu::binary_elements(s.a, s.rank)));
    auto b = testing::random_floats(rng, static_cast<size_t>(cpu::binary_elements(s.b, s.rank)), 0.25f, 2.f);
    const size_t out = static_cast<size_t>(cpu::binary_elements(s.out, s.rank));
    std::vector<float> want(out);
    cpu::binary_reference(s, op, a.data(), b.data(), want.data());
    Device<float> da(a), db(b), dy(testing::nan_filled(out));
    cuda::binary(s, op, da.get(), db.get(), dy.get(), nullptr);
    // One IEEE operation per element on both sides: the same bits.
    EXPECT_TRUE(testing::all_close(testing::result_of(dy, out), want, 0.f)) << "trial " << trial << " rank " << s.rank << " op " << static_cast<int>(op);
  }
}

TEST(CudaBinary, RunsInPlaceOverTheFullShapeOperand) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(34);
  for (int trial = 0; trial < 60; ++trial) {
    cpu::BinaryShape s = random_shape(rng, 1);  // a full, b maybe broadcast
    for (int k = 0; k < s.rank; ++k) s.a[k] = s.out[k];
    const auto op = static_cast<cpu::BinaryOp>(trial % 4);
    const bool into_b = trial % 2 == 1;  // then the operands swap roles
    cpu::BinaryShape run = s;
    if (into_b) std::swap(run.a, run.b);
    const auto full = testing::random_floats(rng, static_cast<size_t>(cpu::binary_elements(s.out, s.rank)));
    const auto other = testing::random_floats(rng, static_cast<size_t>(cpu::binary_elements(s.b, s.rank)), 0.25f, 2.f);
    std::vector<float> want(full.size());
    const float* ra = into_b ? other.data() : full.data();
    const float* rb = into_b ? full.data() : other.data();
    cpu::binary_reference(run, op, ra, rb, want.data());
    Device<float> dfull(full), dother(other);
    cuda::binary(run, op, into_b ? dother.get() : dfull.get(), into_b ? dfull.get() : dother.get(), dfull.get(), nullptr);
    EXPECT_TRUE(testing::all_close(testing::result_of(dfull, full.size()), want, 0.f)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace edgegan

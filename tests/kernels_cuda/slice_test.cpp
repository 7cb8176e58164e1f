// The CUDA Slice against the CPU reference: positive and negative steps, single rows,
// whole-axis reversals, any outer/inner extents.
#include <gtest/gtest.h>

#include "kernels_cpu/slice/slice.h"
#include "kernels_cuda/slice/slice.h"
#include "tests/kernels_cuda/data_op_test_util.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::uniform_int;

TEST(CudaSlice, MatchesTheCpuReferenceWithAnyStep) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(61);
  for (int trial = 0; trial < 150; ++trial) {
    cpu::SliceShape s;
    s.outer = uniform_int(rng, 1, 6);
    s.length = uniform_int(rng, 1, 20);
    s.inner = uniform_int(rng, 1, 50);
    s.start = uniform_int(rng, 0, static_cast<int>(s.length) - 1);
    const int64_t magnitude = uniform_int(rng, 1, static_cast<int>(s.length));
    s.step = trial % 2 == 0 ? magnitude : -magnitude;
    // As many rows as stay inside [0, length).
    const int64_t room = s.step > 0 ? (s.length - 1 - s.start) / s.step : s.start / -s.step;
    s.count = uniform_int(rng, 1, static_cast<int>(room) + 1);
    const auto x = testing::random_floats(rng, static_cast<size_t>(s.outer * s.length * s.inner));
    const size_t out = static_cast<size_t>(s.outer * s.count * s.inner);
    std::vector<float> want(out);
    cpu::slice_reference(s, x.data(), want.data());
    Device<float> dx(x), dy(testing::nan_filled(out));
    cuda::slice(s, dx.get(), dy.get(), nullptr);
    EXPECT_TRUE(testing::all_close(testing::result_of(dy, out), want, 0.f))
        << "trial " << trial << " length " << s.length << " start " << s.start << " step " << s.step << " count " << s.count;
  }
}

}  // namespace
}  // namespace edgegan

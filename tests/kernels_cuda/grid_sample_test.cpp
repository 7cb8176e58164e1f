// The CUDA GridSample against the CPU reference: every mode, padding and align_corners,
// groups, offsets, points far outside the map.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels_cpu/grid_sample/grid_sample.h"
#include "kernels_cuda/grid_sample/grid_sample.h"
#include "tests/kernels_cuda/data_op_test_util.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::uniform_int;

TEST(CudaGridSample, MatchesTheCpuReferenceInEveryMode) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(52);
  for (int trial = 0; trial < 72; ++trial) {
    cpu::GridSampleShape s;
    s.batch = uniform_int(rng, 1, 2);
    s.groups = uniform_int(rng, 1, 3);
    s.channels = s.groups * uniform_int(rng, 1, 5);
    s.in_h = uniform_int(rng, 1, 8), s.in_w = uniform_int(rng, 1, 8);
    s.mode = static_cast<cpu::GridSampleMode>(trial % 3);
    s.padding = static_cast<cpu::GridSamplePadding>(trial / 3 % 3);
    s.align_corners = trial / 9 % 2 == 1;
    s.offsets = trial / 18 % 2 == 1;
    const int64_t scale = uniform_int(rng, 1, 3);
    s.out_h = s.offsets ? s.in_h * scale : uniform_int(rng, 1, 8);
    s.out_w = s.offsets ? s.in_w * scale : uniform_int(rng, 1, 8);
    const float reach = trial / 36 == 1 ? 20.f : 1.5f;
    const auto x = testing::random_floats(rng, static_cast<size_t>(s.batch * s.in_h * s.in_w * s.channels));
    // Multiples of 1/64: every coordinate is then exact on both sides (nvcc's fused
    // multiply-adds round nothing), so nearest picks the same pixel even at a tie.
    auto grid = testing::random_floats(rng, static_cast<size_t>(s.batch * s.out_h * s.out_w * 2 * s.groups), -reach, reach);
    for (float& v : grid) v = std::round(v * 64.f) / 64.f;
    const size_t count = static_cast<size_t>(s.batch * s.out_h * s.out_w * s.channels);
    std::vector<float> want(count);
    cpu::grid_sample_reference(s, x.data(), grid.data(), want.data());
    Device<float> dx(x), dgrid(grid), dy(testing::nan_filled(count));
    cuda::grid_sample(s, dx.get(), dgrid.get(), dy.get(), nullptr);
    EXPECT_TRUE(testing::all_close(testing::result_of(dy, count), want, 1e-5f))
        << "trial " << trial << " mode " << static_cast<int>(s.mode) << " padding " << static_cast<int>(s.padding) << " align " << s.align_corners
        << " offsets " << s.offsets;
  }
}

}  // namespace
}  // namespace edgegan

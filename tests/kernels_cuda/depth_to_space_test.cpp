// The CUDA DepthToSpace against the CPU reference: both directions (space_to_depth),
// DCR and CRD, blocks 1..4.
#include <gtest/gtest.h>

#include "kernels_cpu/depth_to_space/depth_to_space.h"
#include "kernels_cuda/depth_to_space/depth_to_space.h"
#include "tests/kernels_cuda/data_op_test_util.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::uniform_int;

TEST(CudaDepthToSpace, MatchesTheCpuReferenceBothWaysInBothOrders) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(51);
  for (int trial = 0; trial < 96; ++trial) {
    cpu::DepthToSpaceShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.height = uniform_int(rng, 1, 9);
    s.width = uniform_int(rng, 1, 9);
    s.channels = uniform_int(rng, 1, 13);
    s.block = uniform_int(rng, 1, 4);
    s.mode = static_cast<cpu::DepthToSpaceMode>(trial % 2);
    const bool to_space = trial / 2 % 2 == 0;
    const size_t count = static_cast<size_t>(s.batch * s.height * s.width * s.channels * s.block * s.block);
    const auto x = testing::random_floats(rng, count);
    std::vector<float> want(count);
    cpu::depth_to_space_reference(s, to_space, x.data(), want.data());
    Device<float> dx(x), dy(testing::nan_filled(count));
    cuda::depth_to_space(s, to_space, dx.get(), dy.get(), nullptr);
    EXPECT_TRUE(testing::all_close(testing::result_of(dy, count), want, 0.f))
        << "trial " << trial << (to_space ? " to space" : " to depth") << " mode " << static_cast<int>(s.mode) << " block " << s.block << " "
        << s.height << "x" << s.width << "x" << s.channels;
  }
}

}  // namespace
}  // namespace edgegan

// The CUDA PRelu against the CPU reference: a slope per channel and one for all, out of
// place and in place.
#include <gtest/gtest.h>

#include "kernels_cpu/prelu/prelu.h"
#include "kernels_cuda/prelu/prelu.h"
#include "tests/kernels_cuda/data_op_test_util.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::uniform_int;

TEST(CudaPRelu, MatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(41);
  for (int trial = 0; trial < 80; ++trial) {
    const int64_t pixels = uniform_int(rng, 1, 3000), channels = trial % 3 == 0 ? 1 : uniform_int(rng, 1, 70);
    const auto x = testing::random_floats(rng, static_cast<size_t>(pixels * channels));
    const auto slope = testing::random_floats(rng, static_cast<size_t>(channels), -0.5f, 0.5f);
    std::vector<float> want(x.size());
    cpu::prelu_reference(pixels, channels, slope.data(), x.data(), want.data());
    Device<float> dx(x), dslope(slope), dy(testing::nan_filled(x.size()));
    const bool in_place = trial % 2 == 1;
    cuda::prelu(pixels, channels, dslope.get(), dx.get(), in_place ? dx.get() : dy.get(), nullptr);
    EXPECT_TRUE(testing::all_close(testing::result_of(in_place ? dx : dy, x.size()), want, 0.f))
        << "trial " << trial << " pixels " << pixels << " channels " << channels << (in_place ? " in place" : "");
  }
}

}  // namespace
}  // namespace edgegan

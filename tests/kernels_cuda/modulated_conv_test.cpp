// The CUDA modulated-conv passes against the CPU's: demodulation coefficients, the input
// scaled by the style (out of place and in place), the output's scale, bias and activation.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels_cpu/modulated_conv/modulated_conv.h"
#include "kernels_cuda/modulated_conv/modulated_conv.h"
#include "tests/kernels_cuda/data_op_test_util.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::uniform_int;

TEST(CudaModulatedConv, MatchesTheCpuKernels) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(51);
  for (int trial = 0; trial < 30; ++trial) {
    const int batch = uniform_int(rng, 1, 4), cin = uniform_int(rng, 1, 70), cout = uniform_int(rng, 1, 70);
    const long long pixels = uniform_int(rng, 1, 500);
    const auto style = testing::random_floats(rng, static_cast<size_t>(batch * cin), 0.1f, 2.f);
    const auto wsq = testing::random_floats(rng, static_cast<size_t>(cout * cin), 0.5f, 3.f);
    const auto x = testing::random_floats(rng, static_cast<size_t>(batch * pixels * cin));
    const auto conv_out = testing::random_floats(rng, static_cast<size_t>(batch * pixels * cout));
    const auto bias = testing::random_floats(rng, static_cast<size_t>(cout));
    const cpu::Epilogue e = testing::epilogue_for(trial, bias.data());
    const bool demodulate = trial % 3 != 0, in_place = trial % 2 == 1;
    SCOPED_TRACE("trial " + std::to_string(trial));

    std::vector<float> want_d(static_cast<size_t>(batch * cout)), want_x(x.size()), want_y(conv_out);
    cpu::modulated_conv_demodulation(batch, cin, cout, style.data(), wsq.data(), 1e-8f, want_d.data());
    cpu::modulated_conv_scale_input(batch, pixels, cin, style.data(), x.data(), want_x.data());
    cpu::modulated_conv_finish_output(batch, pixels, cout, demodulate ? want_d.data() : nullptr, bias.data(), want_y.data(),
                                      e.activation, e.alpha, e.beta);

    Device<float> dstyle(style), dwsq(wsq), dd(testing::nan_filled(want_d.size())), dx(x), dscaled(testing::nan_filled(x.size())),
        dy(conv_out), dbias(bias), dwant_d(want_d);
    cuda::modulated_conv_demodulation(batch, cin, cout, dstyle.get(), dwsq.get(), 1e-8f, dd.get(), nullptr);
    cuda::modulated_conv_scale_input(batch, pixels, cin, dstyle.get(), dx.get(), in_place ? dx.get() : dscaled.get(), nullptr);
    cuda::modulated_conv_finish_output(batch, pixels, cout, demodulate ? dwant_d.get() : nullptr, dbias.get(), dy.get(),
                                       testing::device_activation(e), nullptr);
    // rsqrtf and fused multiply-adds: a few ulps from the CPU's.
    const std::vector<float> got_d = testing::result_of(dd, want_d.size());
    for (size_t k = 0; k < want_d.size(); ++k) ASSERT_NEAR(got_d[k], want_d[k], 1e-5f * want_d[k]) << "coefficient " << k;
    EXPECT_TRUE(testing::all_close(testing::result_of(in_place ? dx : dscaled, x.size()), want_x, 0.f));
    EXPECT_TRUE(testing::all_close(testing::result_of(dy, conv_out.size()), want_y, 1e-4f));
  }
}

}  // namespace
}  // namespace edgegan

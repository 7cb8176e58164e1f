// The CUDA sliding-channel convolution against the CPU reference: random shapes and
// window tables with no overlap (co = 0: start stride = window), overlapping windows,
// full-width windows (window = Cin) and windows that wrap past the last channel; every
// activation, bias on and off. Skips where no GPU is present.
#include <gtest/gtest.h>

#include "kernels_cpu/sliding_channel_conv/sliding_channel_conv.h"
#include "kernels_cuda/sliding_channel_conv/sliding_channel_conv.h"
#include "tests/kernels_cuda/cuda_test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::device_activation;
using testing::epilogue_for;
using testing::max_abs_diff;
using testing::random_axis;
using testing::random_floats;
using testing::uniform_int;

TEST(CudaSlidingChannelConv, MatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(61);
  int ran = 0, wrapped = 0;
  for (int trial = 0; trial < 160; ++trial) {
    cpu::ConvShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.in_channels = uniform_int(rng, 1, 40);
    s.out_channels = uniform_int(rng, 1, 70);
    s.h = random_axis(rng, false);
    s.w = random_axis(rng, false);
    if (s.h.out < 1 || s.w.out < 1) continue;
    const int64_t cin = s.in_channels;
    int64_t window = 0, start_stride = 0;
    switch (trial % 4) {
      case 0:  // co = 0: windows side by side
        window = uniform_int(rng, 1, static_cast<int>(cin));
        start_stride = window;
        break;
      case 1:  // full width: every output reads every channel, rotated
        window = cin;
        start_stride = uniform_int(rng, 1, static_cast<int>(cin));
        break;
      default:  // overlapping windows
        window = uniform_int(rng, 1, static_cast<int>(cin));
        start_stride = uniform_int(rng, 1, static_cast<int>(window));
        break;
    }
    ++ran;
    const cpu::SlidingChannelPlan plan = cpu::plan_sliding_channel_conv(s, window, cpu::sliding_channel_conv_starts(cin, s.out_channels, start_stride));
    for (int32_t st : plan.starts) wrapped += st + window > cin;
    const int64_t taps = s.h.kernel * s.w.kernel;
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * cin));
    const auto w_onnx = random_floats(rng, static_cast<size_t>(s.out_channels * window * taps));
    std::vector<float> w(w_onnx.size());
    cpu::pack_sliding_channel_conv_weights(plan, w_onnx.data(), w.data());
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    const cpu::Epilogue ep = epilogue_for(trial, trial % 5 == 4 ? nullptr : bias.data());
    std::vector<float> ref(static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    cpu::sliding_channel_conv_reference(plan, x.data(), w_onnx.data(), ref.data(), ep);

    Device<float> dx(x), dw(w), db(bias), y(ref.size());
    Device<int32_t> starts(plan.starts);
    cuda::sliding_channel_conv(s, static_cast<int>(window), static_cast<int>(plan.period()), starts.get(), dw.get(), ep.bias ? db.get() : nullptr,
                               device_activation(ep), dx.get(), y.get(), nullptr);
    cuda::check_cuda(cudaDeviceSynchronize(), "run");
    ASSERT_LE(max_abs_diff(y.host(ref.size()), ref), 1e-4f)
        << "trial " << trial << ": Cin " << cin << " Cout " << s.out_channels << " window " << window << " start stride " << start_stride;
  }
  EXPECT_GE(ran, 100);
  EXPECT_GT(wrapped, 20) << "too few windows wrapped past the last channel";
}

}  // namespace
}  // namespace edgegan

// The CUDA grouped transposed convolution (the direct gather every algorithm runs for
// groups > 1) against the CPU reference: random shapes, strides, dilations, pads and
// output paddings, group counts from 2 to depthwise, the file's phase sub-kernels in
// several panel widths reassembled on the host, every activation, bias on and off.
// Skips where no GPU is present.
#include <gtest/gtest.h>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_grouped.h"
#include "kernels_cuda/conv_transpose2d/conv_transpose2d.h"
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

TEST(CudaConvTranspose2DGrouped, MatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(71);
  int ran = 0;
  for (int trial = 0; trial < 160; ++trial) {
    const bool depthwise = trial % 3 == 0;
    const int groups = depthwise ? uniform_int(rng, 2, 24) : uniform_int(rng, 2, 5);
    const int cig = depthwise ? 1 : uniform_int(rng, 1, 7), cog = depthwise ? uniform_int(rng, 1, 2) : uniform_int(rng, 1, 9);
    cpu::ConvShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.in_channels = groups * cig;
    s.out_channels = groups * cog;
    s.h = random_axis(rng, true);
    s.w = random_axis(rng, true);
    if (s.h.out < 1 || s.w.out < 1) continue;
    ++ran;
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w_onnx = random_floats(rng, static_cast<size_t>(s.in_channels * cog * s.h.kernel * s.w.kernel));
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    const cpu::Epilogue ep = epilogue_for(trial, trial % 5 == 4 ? nullptr : bias.data());
    std::vector<float> ref(static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    cpu::conv_transpose2d_grouped_reference(s, groups, x.data(), w_onnx.data(), ref.data(), ep);

    // The file's layout: per phase the groups' sub-kernels one after the other, in panels.
    const int64_t panels[] = {0, 4, cpu::kWeightPanelColumns};
    cpu::ConvTranspose2DWeights w;
    w.phases_h = cpu::split_conv_transpose_axis(s.h);
    w.phases_w = cpu::split_conv_transpose_axis(s.w);
    w.panel_columns = panels[trial % 3];
    const auto packed = cpu::pack_conv_transpose2d_grouped_weights(s, groups, w.phases_h, w.phases_w, w_onnx.data(), w.panel_columns);
    for (const auto& p : packed) w.sub_kernels.push_back(p.empty() ? nullptr : p.data());
    const auto full = cuda::conv_transpose2d_grouped_full_kernel(s, groups, w);

    Device<float> dx(x), dw(full), db(bias), y(ref.size());
    cuda::conv_transpose2d_grouped_direct(s, groups, dx.get(), dw.get(), ep.bias ? db.get() : nullptr, device_activation(ep), y.get(), nullptr);
    cuda::check_cuda(cudaDeviceSynchronize(), "run");
    ASSERT_LE(max_abs_diff(y.host(ref.size()), ref), 1e-4f)
        << "trial " << trial << ": groups " << groups << " Cin " << s.in_channels << " Cout " << s.out_channels << " k " << s.h.kernel << "x"
        << s.w.kernel << " s " << s.h.stride << "x" << s.w.stride << " d " << s.h.dilation << "x" << s.w.dilation << " panel " << w.panel_columns;
  }
  EXPECT_GE(ran, 100);
}

}  // namespace
}  // namespace edgegan

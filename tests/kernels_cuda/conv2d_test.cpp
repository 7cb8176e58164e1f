// The CUDA direct convolution (grouped, depthwise, and ungrouped) and the fused input
// map's gather against the CPU: random shapes, group counts from 1 to depthwise (with
// channel multipliers), every activation, residual on and off, input maps (nearest
// upsampling and reflect/edge/wrap pads) on and off. Skips where no GPU is present.
#include <gtest/gtest.h>

#include "kernels_cpu/conv2d/conv2d_grouped.h"
#include "kernels_cpu/conv2d/conv2d_input_map.h"
#include "kernels_cuda/conv2d/conv2d.h"
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

// A random fused input map on one axis of a `source`-long input: a factor of 1-3 and
// pads of 0-4 (beyond the input too: the tables repeat the reflection or wrap).
cpu::InputMapAxis random_map_axis(std::mt19937& rng) {
  cpu::InputMapAxis a;
  a.factor = uniform_int(rng, 1, 3);
  a.pad_begin = uniform_int(rng, 0, 4);
  a.pad_end = uniform_int(rng, 0, 4);
  return a;
}

TEST(CudaConv2D, DirectAndInputMapMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(51);
  int ran = 0, few_channels = 0;
  for (int trial = 0; trial < 240; ++trial) {
    // Groups: 1, a few, or depthwise (groups == Cin, Cout a multiple of it).
    const int kind = trial % 4;
    const int groups = kind == 0 ? 1 : kind == 1 ? uniform_int(rng, 2, 4) : uniform_int(rng, 1, 40);
    int cig = kind >= 2 ? 1 : uniform_int(rng, 1, 9), cog = kind == 3 ? uniform_int(rng, 2, 3) : kind == 2 ? 1 : uniform_int(rng, 1, 9);
    // Every other ungrouped trial: 1-4 input channels and up to 70 outputs (the
    // few-channel kernel's chunks of 32, a ragged last one).
    if (kind == 0 && trial % 8 == 0) cig = uniform_int(rng, 1, 4), cog = uniform_int(rng, 1, 70);
    const bool mapped = trial % 3 != 0;
    const bool with_residual = trial % 5 >= 3;
    const cpu::PadMode mode = static_cast<cpu::PadMode>(uniform_int(rng, 1, 3));

    // The source input, and the map the convolution sees (its logical input).
    const int64_t src_h = uniform_int(rng, 1, 10), src_w = uniform_int(rng, 1, 10);
    cpu::InputMapAxis mh, mw;
    if (mapped) mh = random_map_axis(rng), mw = random_map_axis(rng);
    cpu::ConvShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.in_channels = groups * cig;
    s.out_channels = groups * cog;
    s.h = random_axis(rng, false);
    s.w = random_axis(rng, false);
    s.h.in = mh.length(src_h), s.w.in = mw.length(src_w);
    s.h.out = cpu::conv_output_length(s.h.in, s.h.kernel, s.h.stride, s.h.dilation, s.h.pad_begin, s.h.pad_end);
    s.w.out = cpu::conv_output_length(s.w.in, s.w.kernel, s.w.stride, s.w.dilation, s.w.pad_begin, s.w.pad_end);
    if (s.h.out < 1 || s.w.out < 1) continue;
    ++ran;
    few_channels += cuda::conv2d_few_channels(s, groups);

    const auto x = random_floats(rng, static_cast<size_t>(s.batch * src_h * src_w * s.in_channels));
    std::vector<int32_t> rows(static_cast<size_t>(s.h.in)), cols(static_cast<size_t>(s.w.in));
    cpu::conv_input_map_table(src_h, mh, mode, rows.data());
    cpu::conv_input_map_table(src_w, mw, mode, cols.data());
    const cpu::ConvInputMap cpu_map{rows.data(), cols.data(), src_h, src_w};
    std::vector<float> logical(static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    cpu::conv_input_map_gather(s.batch, s.h.in, s.w.in, s.in_channels, cpu_map, x.data(), logical.data(), 1);

    const auto w_onnx = random_floats(rng, static_cast<size_t>(s.out_channels * cig * s.h.kernel * s.w.kernel));
    std::vector<float> w(w_onnx.size());
    cpu::pack_conv2d_grouped_weights(s, groups, w_onnx.data(), w.data());
    const auto bias = random_floats(rng, static_cast<size_t>(s.out_channels));
    const auto residual = random_floats(rng, static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels));
    cpu::Epilogue ep = epilogue_for(trial, trial % 7 == 6 ? nullptr : bias.data());
    if (with_residual) ep.residual = residual.data();
    std::vector<float> ref(residual.size());
    cpu::conv2d_grouped_reference(s, groups, logical.data(), w_onnx.data(), ref.data(), ep);

    const std::string what = "trial " + std::to_string(trial) + ": groups " + std::to_string(groups) + " Cin " + std::to_string(s.in_channels) +
                             " Cout " + std::to_string(s.out_channels) + (mapped ? " mapped" : "") + (with_residual ? " residual" : "");
    Device<float> dx(x), dw(w), db(bias), dres(residual), y(ref.size());
    Device<int32_t> drows(rows), dcols(cols);
    cuda::DeviceInputMap map;
    if (mapped) map = {drows.get(), dcols.get(), static_cast<int>(src_h), static_cast<int>(src_w)};
    cuda::conv2d_direct(s, groups, map, dx.get(), dw.get(), ep.bias ? db.get() : nullptr, device_activation(ep),
                        with_residual ? dres.get() : nullptr, y.get(), nullptr);
    cuda::check_cuda(cudaDeviceSynchronize(), "run");
    const auto got = y.host(ref.size());
    ASSERT_LE(max_abs_diff(got, ref), 1e-4f) << what;
    // The same bits again.
    cuda::conv2d_direct(s, groups, map, dx.get(), dw.get(), ep.bias ? db.get() : nullptr, device_activation(ep),
                        with_residual ? dres.get() : nullptr, y.get(), nullptr);
    cuda::check_cuda(cudaDeviceSynchronize(), "run");
    ASSERT_EQ(y.host(ref.size()), got) << what;

    // The gather the ungrouped path runs before its GEMM: exactly the CPU's.
    if (mapped) {
      Device<float> gathered(logical.size());
      cuda::conv2d_input_map_gather(static_cast<int>(s.batch), static_cast<int>(s.h.in), static_cast<int>(s.w.in), static_cast<int>(s.in_channels),
                                    map, dx.get(), gathered.get(), nullptr);
      cuda::check_cuda(cudaDeviceSynchronize(), "gather");
      ASSERT_EQ(gathered.host(logical.size()), logical) << what;
    }
  }
  EXPECT_GE(ran, 150);
  EXPECT_GE(few_channels, 15) << "trials on the few-input-channel kernel";
}

}  // namespace
}  // namespace edgegan

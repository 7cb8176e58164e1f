// CUDA split deconvolution against the CPU reference. Skips cleanly without a GPU.
#include <gtest/gtest.h>

#include "kernels_cpu/conv_transpose2d/conv_transpose2d_split.h"
#include "kernels_cuda/conv_transpose2d/conv_transpose2d_split.h"
#include "tests/test_util.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_reference.h"
#include "kernels_cpu/common/conv_geometry.h"
#include "kernels_cpu/conv_transpose2d/conv_transpose2d_geometry.h"

namespace edgegan {
namespace {

using testing::max_abs_diff;
using testing::random_floats;
using testing::uniform_int;

TEST(CudaConvTranspose, SplitMatchesCpuReference) {
  std::string why;
  if (!cuda::device_available(&why)) GTEST_SKIP() << "no usable CUDA device: " << why;
  std::mt19937 rng(77);
  for (int trial = 0; trial < 200; ++trial) {
    cpu::ConvShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.in_channels = uniform_int(rng, 1, 17);
    s.out_channels = uniform_int(rng, 1, 17);
    for (cpu::ConvAxis* a : {&s.h, &s.w}) {
      a->in = uniform_int(rng, 1, 9);
      a->kernel = uniform_int(rng, 1, 7);
      a->stride = uniform_int(rng, 1, 4);
      a->pad_begin = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->pad_end = uniform_int(rng, 0, static_cast<int>(a->kernel) - 1);
      a->out = cpu::conv_transpose_output_length(a->in, a->kernel, a->stride, 1, a->pad_begin, a->pad_end, uniform_int(rng, 0, static_cast<int>(a->stride) - 1));
    }
    if (s.h.out < 1 || s.w.out < 1) continue;
    const auto x = random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.in_channels));
    const auto w = random_floats(rng, static_cast<size_t>(s.in_channels * s.out_channels * s.h.kernel * s.w.kernel));
    const auto b = random_floats(rng, static_cast<size_t>(s.out_channels));
    cpu::Epilogue ep{b.data(), static_cast<cpu::Activation>(trial % 5), 0.2f};
    std::vector<float> ref(static_cast<size_t>(s.batch * s.h.out * s.w.out * s.out_channels)), y(ref.size());
    cpu::conv_transpose2d_reference(s, x.data(), w.data(), ref.data(), ep);
    cpu::ConvTranspose2DWeights split;
    split.phases_h = cpu::split_conv_transpose_axis(s.h);
    split.phases_w = cpu::split_conv_transpose_axis(s.w);
    const auto packed = cpu::pack_conv_transpose2d_weights(s, split.phases_h, split.phases_w, w.data());
    for (const auto& p : packed) split.sub_kernels.push_back(p.empty() ? nullptr : p.data());
    cuda::conv_transpose2d_split_host(s, split, x.data(), y.data(), ep);
    ASSERT_LE(max_abs_diff(y, ref), 1e-4f) << "trial " << trial;
  }
}

}  // namespace
}  // namespace edgegan

// The CUDA GroupNorm against the CPU reference (statistics in double) over random
// shapes: one group, instance norm (groups == channels) and between, every activation,
// residual on and off, in place, maps whose mean lies far beyond their spread, and
// the same bits on a second run. Skips where no GPU is present.
#include <gtest/gtest.h>

#include "kernels_cpu/group_norm/group_norm.h"
#include "kernels_cuda/gemm/conv_gemm.h"
#include "kernels_cuda/group_norm/group_norm.h"
#include "tests/kernels_cuda/cuda_test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::device_activation;
using testing::epilogue_for;
using testing::max_abs_diff;
using testing::random_floats;
using testing::uniform_int;

TEST(CudaGroupNorm, MatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(41);
  for (int trial = 0; trial < 96; ++trial) {
    cpu::GroupNormShape s;
    s.batch = uniform_int(rng, 1, 3);
    const int h = uniform_int(rng, 1, trial % 8 == 0 ? 96 : 20), w = uniform_int(rng, 1, trial % 8 == 0 ? 96 : 20);
    s.pixels = h * w;
    const int group_choices[] = {1, 2, 3, 4, 8, 32};
    const int groups = group_choices[uniform_int(rng, 0, 5)];
    const int per_group = uniform_int(rng, 1, 9);
    s.groups = groups;
    s.channels = groups * per_group;
    if (trial % 5 == 1) s.groups = s.channels;  // instance norm
    const size_t count = static_cast<size_t>(s.batch * s.pixels * s.channels);
    // Every third trial: a mean far beyond the spread (what shifted sums are for).
    const float offset = trial % 3 == 2 ? 300.f : 0.f;
    auto x = random_floats(rng, count, offset - 2.f, offset + 2.f);
    const auto scale = random_floats(rng, static_cast<size_t>(s.channels), 0.5f, 1.5f);
    const auto shift = random_floats(rng, static_cast<size_t>(s.channels));
    const auto residual = random_floats(rng, count);
    const float epsilon = trial % 2 ? 1e-5f : 1e-3f;
    const cpu::Epilogue ep = epilogue_for(trial, nullptr);
    const bool with_residual = trial % 4 >= 2;
    std::vector<float> ref(count);
    cpu::group_norm_reference(s, x.data(), scale.data(), shift.data(), epsilon, ref.data(), ep.activation, ep.alpha, ep.beta,
                              with_residual ? residual.data() : nullptr);

    cuda::GroupNormGeometry g{static_cast<int>(s.batch), s.pixels, static_cast<int>(s.channels), static_cast<int>(s.groups)};
    // The planned chunking, one chunk, or any count up to one per pixel (and beyond).
    g.chunks = trial % 3 == 0 ? cuda::group_norm_chunks(g, cuda::multiprocessor_count())
                              : (trial % 3 == 1 ? 1 : uniform_int(rng, 1, static_cast<int>(s.pixels) + 3));
    Device<float> dx(x), dscale(scale), dshift(shift), dres(residual), y(count);
    Device<float> ws(static_cast<size_t>(cuda::group_norm_workspace_floats(g)));
    const std::string what = "trial " + std::to_string(trial) + ": " + std::to_string(s.batch) + "x" + std::to_string(s.pixels) + "x" +
                             std::to_string(s.channels) + " groups " + std::to_string(s.groups) + ", " + std::to_string(g.chunks) + " chunks";
    cuda::group_norm(g, dx.get(), dscale.get(), dshift.get(), epsilon, y.get(), device_activation(ep), with_residual ? dres.get() : nullptr,
                     ws.get(), nullptr);
    cuda::check_cuda(cudaDeviceSynchronize(), "run");
    const auto got = y.host(count);
    ASSERT_LE(max_abs_diff(got, ref), 1e-4f) << what;
    // The same bits again (fixed reduction order).
    cuda::group_norm(g, dx.get(), dscale.get(), dshift.get(), epsilon, y.get(), device_activation(ep), with_residual ? dres.get() : nullptr,
                     ws.get(), nullptr);
    cuda::check_cuda(cudaDeviceSynchronize(), "run");
    ASSERT_EQ(y.host(count), got) << what;
    // In place over the input.
    cuda::group_norm(g, dx.get(), dscale.get(), dshift.get(), epsilon, dx.get(), device_activation(ep), with_residual ? dres.get() : nullptr,
                     ws.get(), nullptr);
    cuda::check_cuda(cudaDeviceSynchronize(), "run");
    ASSERT_EQ(dx.host(count), got) << what << ", in place";
  }
}

// A constant group: zero variance, y = shift (epsilon keeps it finite).
TEST(CudaGroupNorm, ConstantGroupGivesTheShift) {
  SKIP_WITHOUT_GPU();
  cuda::GroupNormGeometry g{2, 50, 6, 3};
  g.chunks = 4;
  const std::vector<float> x(600, 3.25f), scale(6, 2.f), shift = {0.5f, -1.f, 2.f, 0.f, 1.f, -2.f};
  Device<float> dx(x), dscale(scale), dshift(shift), y(600), ws(static_cast<size_t>(cuda::group_norm_workspace_floats(g)));
  cuda::group_norm(g, dx.get(), dscale.get(), dshift.get(), 1e-5f, y.get(), {}, nullptr, ws.get(), nullptr);
  cuda::check_cuda(cudaDeviceSynchronize(), "run");
  const auto got = y.host(600);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], shift[i % 6]) << i;
}

}  // namespace
}  // namespace edgegan

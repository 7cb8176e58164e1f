// The CUDA Pool against the CPU reference: max (with dilation) and average (with and
// without count_include_pad), pads, ceil_mode, strides, and global windows.
#include <gtest/gtest.h>

#include "kernels_cpu/pool/pool.h"
#include "kernels_cuda/pool/pool.h"
#include "tests/kernels_cuda/data_op_test_util.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::uniform_int;

// An axis the validator accepts (pads below the window's extent, at least one output),
// or a global one (the window is the whole axis).
bool random_axis(std::mt19937& rng, bool max, bool global, bool ceil_mode, cpu::ConvAxis& a) {
  a.in = uniform_int(rng, 1, 14);
  if (global) {
    a.kernel = a.in, a.stride = 1, a.dilation = 1, a.pad_begin = a.pad_end = 0;
  } else {
    a.kernel = uniform_int(rng, 1, 4);
    a.stride = uniform_int(rng, 1, 3);
    a.dilation = max ? uniform_int(rng, 1, 2) : 1;
    const int extent = static_cast<int>(a.dilation * (a.kernel - 1) + 1);
    a.pad_begin = uniform_int(rng, 0, extent - 1);
    a.pad_end = uniform_int(rng, 0, extent - 1);
  }
  a.out = cpu::pool_output_length(a.in, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end, ceil_mode);
  return a.out >= 1;
}

TEST(CudaPool, MatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(81);
  for (int trial = 0; trial < 300; ++trial) {
    const bool max = trial % 2 == 0, include_pad = trial / 2 % 2 == 1, ceil_mode = trial / 4 % 2 == 1, global = trial % 10 == 9;
    cpu::PoolShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.channels = uniform_int(rng, 1, 40);
    if (!random_axis(rng, max, global, ceil_mode, s.h) || !random_axis(rng, max, global, ceil_mode, s.w)) continue;
    const auto kind = max ? cpu::PoolKind::kMax : cpu::PoolKind::kAverage;
    const auto x = testing::random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.channels));
    const size_t out = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.channels);
    std::vector<float> reference(out), fast(out);
    cpu::pool_reference(s, kind, include_pad, x.data(), reference.data());
    cpu::pool(s, kind, include_pad, x.data(), fast.data(), 1);
    Device<float> dx(x), dy(testing::nan_filled(out));
    cuda::pool(s, kind, include_pad, dx.get(), dy.get(), nullptr);
    const std::vector<float> got = testing::result_of(dy, out);
    // The CPU kernel sums in float in the same tap order; the reference in double.
    EXPECT_TRUE(testing::all_close(got, fast, max ? 0.f : 1e-6f)) << "trial " << trial;
    EXPECT_TRUE(testing::all_close(got, reference, max ? 0.f : 1e-5f))
        << "trial " << trial << (max ? " max" : " average") << (include_pad ? " include_pad" : "") << (ceil_mode ? " ceil" : "") << " h "
        << s.h.in << " k" << s.h.kernel << " s" << s.h.stride << " d" << s.h.dilation << " p" << s.h.pad_begin << "," << s.h.pad_end << " w "
        << s.w.in << " k" << s.w.kernel << " s" << s.w.stride << " d" << s.w.dilation << " p" << s.w.pad_begin << "," << s.w.pad_end;
  }
}

}  // namespace
}  // namespace edgegan

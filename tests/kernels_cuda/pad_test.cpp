// The CUDA Pad against the CPU reference over random shapes: every mode, asymmetric,
// zero, wide (reflect/wrap periods) and negative (cropping) pads.
#include <gtest/gtest.h>

#include "kernels_cpu/pad/pad.h"
#include "kernels_cuda/pad/pad.h"
#include "tests/kernels_cuda/data_op_test_util.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::uniform_int;

// A pad for an axis of length `in`: negative ones keep at least one pixel.
cpu::PadAxis random_axis(std::mt19937& rng, int64_t in) {
  cpu::PadAxis a;
  a.in = in;
  a.pad_begin = uniform_int(rng, -3, 7);
  a.pad_end = uniform_int(rng, -3, 7);
  while (a.hi() - a.lo() < 1) a.pad_begin = std::max<int64_t>(a.pad_begin + 1, 0), a.pad_end = std::max<int64_t>(a.pad_end + 1, 0);
  return a;
}

TEST(CudaPad, MatchesTheCpuReferenceInEveryMode) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(21);
  for (int trial = 0; trial < 120; ++trial) {
    cpu::PadShape s;
    s.batch = uniform_int(rng, 1, 3);
    s.channels = uniform_int(rng, 1, 37);
    s.h = random_axis(rng, uniform_int(rng, 1, 12));
    s.w = random_axis(rng, uniform_int(rng, 1, 12));
    s.mode = static_cast<cpu::PadMode>(trial % 4);
    s.value = trial % 8 == 0 ? 0.f : 0.37f;
    const auto x = testing::random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.channels));
    const size_t out = static_cast<size_t>(s.batch * s.h.out() * s.w.out() * s.channels);
    std::vector<float> want(out);
    cpu::pad_reference(s, x.data(), want.data());
    Device<float> dx(x), dy(testing::nan_filled(out));
    Device<int32_t> hs(cuda::pad_source_table(s.h, s.mode)), ws(cuda::pad_source_table(s.w, s.mode));
    cuda::pad(s, hs.get(), ws.get(), dx.get(), dy.get(), nullptr);
    EXPECT_TRUE(testing::all_close(testing::result_of(dy, out), want, 0.f))
        << "trial " << trial << " mode " << static_cast<int>(s.mode) << " h " << s.h.in << " (" << s.h.pad_begin << "," << s.h.pad_end << ") w "
        << s.w.in << " (" << s.w.pad_begin << "," << s.w.pad_end << ") c " << s.channels;
  }
}

}  // namespace
}  // namespace edgegan

// The CUDA Resize against the CPU reference: nearest (every rounding), linear and cubic
// (two coefficients, with and without exclude_outside) under every coordinate
// transform, up- and downsampling, from sizes and from scales, with the device tables
// made by the CPU's table builder as the engine makes them.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels_cpu/resize/resize.h"
#include "kernels_cuda/resize/resize.h"
#include "tests/kernels_cuda/data_op_test_util.h"
#include "tests/test_util.h"

namespace edgegan {
namespace {

using testing::Device;
using testing::uniform_int;

cpu::ResizeAxis random_axis(std::mt19937& rng, bool from_scale) {
  cpu::ResizeAxis a;
  a.in = uniform_int(rng, 1, 11);
  if (from_scale) {
    static const double scales[] = {0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 0.3};
    do {
      a.scale = static_cast<float>(scales[uniform_int(rng, 0, 7)]);  // as the file holds it
      a.out = static_cast<int64_t>(std::floor(static_cast<double>(a.in) * a.scale));
    } while (a.out < 1);
  } else {
    a.out = uniform_int(rng, 1, 25);
  }
  return a;
}

TEST(CudaResize, MatchesTheCpuReferenceInEveryMode) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(71);
  int trial = 0;
  for (int mode = 0; mode < 3; ++mode)
    for (int coordinates = 0; coordinates < 6; ++coordinates)
      for (int variant = 0; variant < 4; ++variant)
        for (int repeat = 0; repeat < 3; ++repeat, ++trial) {
          cpu::ResizeShape s;
          s.batch = uniform_int(rng, 1, 2);
          s.channels = uniform_int(rng, 1, 19);
          const bool from_scale = repeat == 1;
          s.h = random_axis(rng, from_scale);
          s.w = random_axis(rng, from_scale);
          s.params.mode = static_cast<cpu::ResizeMode>(mode);
          s.params.coordinates = static_cast<cpu::ResizeCoordinates>(coordinates);
          s.params.nearest = static_cast<cpu::ResizeNearest>(variant);
          s.params.cubic_coeff_a = variant % 2 == 0 ? -0.75f : -0.5f;
          s.params.exclude_outside = variant >= 2;
          const auto x = testing::random_floats(rng, static_cast<size_t>(s.batch * s.h.in * s.w.in * s.channels));
          const size_t out = static_cast<size_t>(s.batch * s.h.out * s.w.out * s.channels);
          std::vector<float> want(out);
          cpu::resize_reference(s, x.data(), want.data());

          std::vector<uint32_t> storage(static_cast<size_t>(cpu::resize_table_bytes(s) / 4));
          const cpu::ResizeTables t = cpu::resize_build_tables(s, storage.data());
          const size_t hk = static_cast<size_t>(s.h.out * t.taps), wk = static_cast<size_t>(s.w.out * t.taps);
          Device<int32_t> h_index(std::vector<int32_t>(t.h_index, t.h_index + hk)), w_index(std::vector<int32_t>(t.w_index, t.w_index + wk));
          Device<float> h_weight(std::vector<float>(t.h_weight, t.h_weight + hk)), w_weight(std::vector<float>(t.w_weight, t.w_weight + wk));
          cuda::ResizeDeviceTables dt;
          dt.taps = t.taps;
          dt.h_index = h_index.get(), dt.h_weight = h_weight.get(), dt.w_index = w_index.get(), dt.w_weight = w_weight.get();
          Device<float> dx(x), dy(testing::nan_filled(out));
          cuda::resize(s, dt, dx.get(), dy.get(), nullptr);
          // Nearest copies; the blends differ from the double-precision reference by float rounding.
          const float tolerance = mode == 0 ? 0.f : 1e-5f;
          EXPECT_TRUE(testing::all_close(testing::result_of(dy, out), want, tolerance))
              << "trial " << trial << " mode " << mode << " coordinates " << coordinates << " variant " << variant << " h " << s.h.in << "->"
              << s.h.out << " w " << s.w.in << "->" << s.w.out << " scale " << s.h.scale << "," << s.w.scale;
        }
}

}  // namespace
}  // namespace edgegan

// Fails the i-th heap allocation, for every i, while a model is loaded, a
// session created and run (and while a model is converted): each time the caller
// must get edgegan::Error (ConvertError) saying it ran out of memory — never a
// crash, never another exception type, never a result after a lost allocation.
// Leaks are caught by LeakSanitizer in the sanitizer build of this same test.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <new>

#include "converter/converter.h"
#include "edgegan/edgegan.h"
#include "tests/test_util.h"

namespace {

// -1: never fail. Set to i: the i-th allocation from now on (0-based) throws.
std::atomic<long> g_countdown{-1};

// A place for a debugger breakpoint (gdb: break failing_allocation) to see who allocates.
__attribute__((noinline)) void failing_allocation() { asm volatile(""); }

bool should_fail() {
  long v = g_countdown.load();
  while (v >= 0 && !g_countdown.compare_exchange_weak(v, v - 1)) {
  }
  if (v == 0) failing_allocation();
  return v == 0;
}

// `can_fail`: only throwing allocations are failure points; a nothrow request
// (std::stable_sort's scratch) has a fallback by design and is always served.
void* allocate(size_t n, size_t align, bool can_fail = true) {
  if (can_fail && should_fail()) return nullptr;
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(n);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}

}  // namespace

void* test_allocate(size_t n, size_t align, bool may_fail) { return allocate(n, align, may_fail); }

#include "tests/engine/replaced_operator_new.h"

namespace edgegan {
namespace {

using testing::golden_dir;
using testing::read_file;

// Runs `body` with the i-th allocation failing, for i = 0, 1, ... until a run
// completes without reaching the failure. Returns how many failure points were tried.
template <typename ErrorType, typename Body>
long fail_each_allocation(Body body) {
  for (long i = 0;; ++i) {
    bool completed = false, other_exception = false;
    std::string error;
    g_countdown = i;
    try {
      body();
      completed = true;
    } catch (const ErrorType& e) {
      error = e.what();
    } catch (...) {
      other_exception = true;
    }
    const long left = g_countdown.exchange(-1);
    EXPECT_FALSE(other_exception) << "allocation " << i << ": an exception other than the engine's error escaped";
    if (completed) {
      // The failure point was never reached (left >= 0): every allocation has been tried.
      EXPECT_GE(left, 0) << "allocation " << i << " failed, yet the call reported success";
      return i;
    }
    EXPECT_NE(error.find("out of memory"), std::string::npos) << "allocation " << i << ": " << error;
    if (::testing::Test::HasFailure()) return i;
  }
}

TEST(AllocationFailure, LoadCreateAndRunFailCleanlyAtEveryAllocation) {
  const std::string onnx = read_file(golden_dir() / "cgan_embed_concat_small" / "model.onnx");
  const std::vector<uint8_t> bytes = converter::convert_onnx(onnx, "cgan").egan;
  const std::vector<Tensor> inputs = {Tensor{"z", DType::kFloat32, Layout::kRowMajor, {2, 6}, normal_noise(12, 3), {}},
                                      Tensor{"label", DType::kInt64, Layout::kRowMajor, {2}, {}, {1, 4}}};
  const SessionOptions options{.threads = 2, .batch = 2, .conv_transpose2d_algo = ConvTranspose2DAlgo::kCol2im};
  std::vector<float> expected;
  {
    Session s(Model::from_bytes(bytes), options);
    expected = s.run(inputs)[0].f32;
  }
  std::vector<float> got;
  const long points = fail_each_allocation<Error>([&] {
    Session s(Model::from_bytes(bytes), options);
    got = std::move(s.run(inputs)[0].f32);  // a move: the test itself must not allocate here
  });
  std::cout << "failed each of " << points << " allocations of load + session + run in turn\n";
  EXPECT_GT(points, 20);
  EXPECT_EQ(got, expected);
}

TEST(AllocationFailure, ConversionFailsCleanlyAtEveryAllocation) {
  const std::string onnx = read_file(golden_dir() / "g_k3s2_outpad_nonsquare" / "model.onnx");
  const long points = fail_each_allocation<converter::ConvertError>([&] { (void)converter::convert_onnx(onnx, "g.onnx"); });
  std::cout << "failed each of " << points << " allocations of a conversion in turn\n";
  EXPECT_GT(points, 100);
}

}  // namespace
}  // namespace edgegan

// Hands out tasks 0..n-1 to the threads of a parallel region as contiguous runs,
// one run per thread, with stealing from the back.
//
// A thread takes its own run from the front; once that is empty it takes tasks
// from the back of the other runs. Each thread so walks consecutive tasks (what a
// per-thread cache of neighbouring input rows needs, as the pixel-lanes heads
// keep), and a thread that starts late does not hold the others up: on this
// machine a sleeping OpenMP worker (passive waiting) takes 20-40 us to wake, the
// whole time of a head layer, and a static schedule would make the caller wait for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>

#include "kernels_cpu/common/inline_array.h"

namespace edgegan::cpu {

class TaskRuns {
 public:
  // 0 <= tasks < 2^32 (a run packs begin and end into one word); runs >= 1 (usually
  // the thread count).
  TaskRuns(int64_t tasks, int runs) : count_(runs), runs_(static_cast<size_t>(runs)) {
    if (tasks < 0 || tasks >= (int64_t{1} << 32)) throw std::length_error("TaskRuns: task count out of range");
    for (int i = 0; i < runs; ++i) {
      const uint64_t begin = static_cast<uint64_t>(tasks * i / runs), end = static_cast<uint64_t>(tasks * (i + 1) / runs);
      runs_[static_cast<size_t>(i)].store(begin | end << 32, std::memory_order_relaxed);
    }
  }

  // The next task for thread `thread` (any index; taken modulo the runs), or -1
  // when every task has been handed out.
  int64_t next(int thread) {
    const int own = thread % count_;
    if (const int64_t t = take(runs_[static_cast<size_t>(own)], /*front=*/true); t >= 0) return t;
    for (int i = 1; i < count_; ++i)
      if (const int64_t t = take(runs_[static_cast<size_t>((own + i) % count_)], /*front=*/false); t >= 0) return t;
    return -1;
  }

 private:
  static int64_t take(std::atomic<uint64_t>& run, bool front) {
    uint64_t v = run.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t begin = v & 0xFFFFFFFFu, end = v >> 32;
      if (begin >= end) return -1;
      const uint64_t taken = front ? begin : end - 1;
      const uint64_t rest = front ? (begin + 1) | end << 32 : begin | (end - 1) << 32;
      if (run.compare_exchange_weak(v, rest, std::memory_order_relaxed)) return static_cast<int64_t>(taken);
    }
  }

  int count_;
  InlineArray<std::atomic<uint64_t>, 64> runs_;  // begin | end << 32; up to 64 threads without a heap allocation
};

}  // namespace edgegan::cpu

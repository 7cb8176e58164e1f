// Arena planner: every buffer has a size and a lifetime [first_step, last_step]
// (inclusive, in op order). Buffers are placed largest first, each at the lowest
// offset where it fits among the already placed buffers whose lifetimes overlap
// its own — the greedy-by-size strategy of TFLite Micro's arena planner.
#pragma once

#include <cstdint>
#include <vector>

namespace edgegan {

struct PlannedBuffer {
  uint64_t size = 0;
  int first_step = 0;
  int last_step = 0;
  uint64_t offset = 0;  // filled in by plan_arena
};

// Places every buffer and returns the arena size. Offsets are multiples of `alignment`.
uint64_t plan_arena(std::vector<PlannedBuffer>& buffers, uint64_t alignment = 64);

// True when two buffers alive at the same step share a byte (a planner bug).
bool any_live_buffers_overlap(const std::vector<PlannedBuffer>& buffers);

// The largest total size of buffers alive at any one step: no plan can be smaller.
uint64_t arena_lower_bound(const std::vector<PlannedBuffer>& buffers);

}  // namespace edgegan

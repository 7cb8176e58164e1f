#include "engine/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace edgegan {
namespace {

bool lifetimes_overlap(const PlannedBuffer& a, const PlannedBuffer& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// Sizes are capped by the session's memory limit before planning; saturating sums
// still keep a hostile plan from wrapping around.
uint64_t add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t align_up(uint64_t v, uint64_t a) { return v > UINT64_MAX - a ? UINT64_MAX / a * a : (v + a - 1) / a * a; }

}  // namespace

uint64_t plan_arena(std::vector<PlannedBuffer>& buffers, uint64_t alignment) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size) return buffers[a].size > buffers[b].size;
    return buffers[a].first_step < buffers[b].first_step;
  });

  std::vector<size_t> placed;
  uint64_t arena = 0;
  for (size_t index : order) {
    PlannedBuffer& buf = buffers[index];
    // Buffers this one must not touch, by offset.
    std::vector<const PlannedBuffer*> live;
    for (size_t p : placed)
      if (lifetimes_overlap(buffers[p], buf) && buffers[p].size > 0) live.push_back(&buffers[p]);
    std::sort(live.begin(), live.end(), [](const PlannedBuffer* a, const PlannedBuffer* b) { return a->offset < b->offset; });
    uint64_t candidate = 0;
    for (const PlannedBuffer* other : live) {
      if (other->offset >= add(candidate, buf.size)) break;  // the gap before `other` fits
      candidate = std::max(candidate, align_up(add(other->offset, other->size), alignment));
    }
    buf.offset = candidate;
    arena = std::max(arena, align_up(add(candidate, buf.size), alignment));
    placed.push_back(index);
  }
  return arena;
}

bool any_live_buffers_overlap(const std::vector<PlannedBuffer>& buffers) {
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const PlannedBuffer& a = buffers[i];
      const PlannedBuffer& b = buffers[j];
      if (a.size == 0 || b.size == 0 || !lifetimes_overlap(a, b)) continue;
      if (a.offset < b.offset + b.size && b.offset < a.offset + a.size) return true;
    }
  return false;
}

uint64_t arena_lower_bound(const std::vector<PlannedBuffer>& buffers) {
  int last = 0;
  for (const auto& b : buffers) last = std::max(last, b.last_step);
  uint64_t best = 0;
  for (int step = 0; step <= last; ++step) {
    uint64_t total = 0;
    for (const auto& b : buffers)
      if (b.first_step <= step && step <= b.last_step) total = add(total, b.size);
    best = std::max(best, total);
  }
  return best;
}

}  // namespace edgegan

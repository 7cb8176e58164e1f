#include "engine/memory_tracker.h"

#include <new>
#include <string>
#include <utility>

#include "edgegan/edgegan.h"

namespace edgegan {

void* MemoryTracker::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  try {
    p = ::operator new(bytes, std::align_val_t{64});
  } catch (const std::bad_alloc&) {
    throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
  }
  const uint64_t now = current_.fetch_add(bytes) + bytes;
  uint64_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
  return p;
}

void MemoryTracker::release(void* p, size_t bytes) {
  if (!p) return;
  ::operator delete(p, std::align_val_t{64});
  current_.fetch_sub(bytes);
}

TrackedBuffer::TrackedBuffer(MemoryTracker& tracker, size_t bytes)
    : tracker_(&tracker), data_(static_cast<uint8_t*>(tracker.allocate(bytes))), size_(bytes) {}

TrackedBuffer::~TrackedBuffer() {
  if (tracker_) tracker_->release(data_, size_);
}

TrackedBuffer::TrackedBuffer(TrackedBuffer&& o) noexcept
    : tracker_(std::exchange(o.tracker_, nullptr)), data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

TrackedBuffer& TrackedBuffer::operator=(TrackedBuffer&& o) noexcept {
  if (this != &o) {
    if (tracker_) tracker_->release(data_, size_);
    tracker_ = std::exchange(o.tracker_, nullptr);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

}  // namespace edgegan

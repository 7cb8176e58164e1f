// Every byte a session allocates for a model (the activation arena and any
// weight copies a baseline kernel makes) goes through a MemoryTracker, so the
// engine can state what it really allocated and tests can hold that against the
// memory report's plan.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace edgegan {

class MemoryTracker {
 public:
  void* allocate(size_t bytes);  // 64-byte aligned; throws Error when it fails
  void release(void* p, size_t bytes);
  uint64_t current_bytes() const { return current_.load(); }
  uint64_t peak_bytes() const { return peak_.load(); }
  // Memory a backend allocated itself (a GPU's), counted apart from host memory.
  void note_device_allocation(uint64_t bytes) { device_.fetch_add(bytes); }
  void note_device_release(uint64_t bytes) { device_.fetch_sub(bytes); }
  uint64_t device_bytes() const { return device_.load(); }

 private:
  std::atomic<uint64_t> current_{0}, peak_{0}, device_{0};
};

// An owned, 64-byte aligned block of bytes accounted to a tracker.
class TrackedBuffer {
 public:
  TrackedBuffer() = default;
  TrackedBuffer(MemoryTracker& tracker, size_t bytes);
  ~TrackedBuffer();
  TrackedBuffer(TrackedBuffer&& other) noexcept;
  TrackedBuffer& operator=(TrackedBuffer&& other) noexcept;
  TrackedBuffer(const TrackedBuffer&) = delete;
  TrackedBuffer& operator=(const TrackedBuffer&) = delete;

  uint8_t* data() const { return data_; }
  float* floats() const { return reinterpret_cast<float*>(data_); }
  size_t size() const { return size_; }

 private:
  MemoryTracker* tracker_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace edgegan

// A fixed-size array whose elements live inside the object up to N of them, on the
// heap beyond: per-call tables of the kernels (taps, task runs) cost no heap
// allocation in the common case, which is what lets a session or a training loop run
// without allocating once it is built.
#pragma once

#include <array>
#include <cstddef>
#include <memory>

namespace edgegan::cpu {

template <typename T, size_t N>
class InlineArray {
 public:
  explicit InlineArray(size_t n) : size_(n) {
    if (n > N) heap_ = std::make_unique<T[]>(n);
  }
  InlineArray(InlineArray&&) noexcept = default;  // (deleted for element types that cannot move)
  InlineArray(const InlineArray&) = delete;
  InlineArray& operator=(const InlineArray&) = delete;

  size_t size() const { return size_; }
  T* data() { return heap_ ? heap_.get() : inline_.data(); }
  const T* data() const { return heap_ ? heap_.get() : inline_.data(); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

 private:
  size_t size_;
  std::array<T, N> inline_{};
  std::unique_ptr<T[]> heap_;
};

}  // namespace edgegan::cpu

// Every form of the global operator new and delete, routed through one function that
// the including test defines:
//
//   void* test_allocate(size_t bytes, size_t alignment, bool may_fail);
//
// It returns memory from std::malloc / std::aligned_alloc (delete frees with std::free),
// or nullptr, and then the throwing forms throw std::bad_alloc. `may_fail` is false for
// the nothrow forms, which callers use where they have a fallback. Include it in one
// .cpp of an executable of its own: it replaces the allocator of the whole program.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

void* test_allocate(size_t bytes, size_t alignment, bool may_fail);

namespace edgegan::testing {
inline void* throwing_allocate(size_t n, size_t align) {
  if (void* p = test_allocate(n, align, true)) return p;
  throw std::bad_alloc();
}
}  // namespace edgegan::testing

void* operator new(size_t n) { return edgegan::testing::throwing_allocate(n, 0); }
void* operator new[](size_t n) { return edgegan::testing::throwing_allocate(n, 0); }
void* operator new(size_t n, std::align_val_t a) { return edgegan::testing::throwing_allocate(n, static_cast<size_t>(a)); }
void* operator new[](size_t n, std::align_val_t a) { return edgegan::testing::throwing_allocate(n, static_cast<size_t>(a)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return test_allocate(n, 0, false); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return test_allocate(n, 0, false); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return test_allocate(n, static_cast<size_t>(a), false); }
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return test_allocate(n, static_cast<size_t>(a), false); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

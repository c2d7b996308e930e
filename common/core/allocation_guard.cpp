#include "common/core/allocation_guard.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace gcnlab {

namespace {
std::atomic<bool> refusing{false};

void* allocate(std::size_t bytes) {
  if (refusing.load(std::memory_order_relaxed)) throw std::bad_alloc();
  if (void* p = std::malloc(bytes ? bytes : 1)) return p;
  throw std::bad_alloc();
}

void* allocate(std::size_t bytes, std::align_val_t align) {
  if (refusing.load(std::memory_order_relaxed)) throw std::bad_alloc();
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (bytes + a - 1) / a * a + (bytes ? 0 : a))) return p;
  throw std::bad_alloc();
}
}  // namespace

void refuse_allocations(bool on) { refusing.store(on); }

}  // namespace gcnlab

// The replaceable global allocation functions ([new.delete]): the throwing forms (the nothrow and
// array forms of the standard library call these), and every delete as free, so that memory is
// always malloc's (sanitizers see malloc and free in pairs).
void* operator new(std::size_t n) { return gcnlab::allocate(n); }
void* operator new[](std::size_t n) { return gcnlab::allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) { return gcnlab::allocate(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return gcnlab::allocate(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

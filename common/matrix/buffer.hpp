#pragma once
// Buffer<T>: an array in backend memory, freed through the allocator that made it.

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "common/backend/allocator.hpp"
#include "common/core/error.hpp"

namespace gcnlab {

template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(Allocator& a, std::size_t n)
      : alloc_(&a), data_(static_cast<T*>(a.allocate(n * sizeof(T)))), size_(n) {}
  ~Buffer() { release(); }

  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::span<T> span() { return {data_, size_}; }
  std::span<const T> span() const { return {data_, size_}; }
  Allocator* allocator() const { return alloc_; }

  void upload(std::span<const T> host) {
    GCNLAB_ASSERT(host.size() == size_);
    if (size_) alloc_->copy_to_device(data_, host.data(), size_ * sizeof(T));
  }
  // The first host.size() elements: a buffer sized for the largest use (the full
  // graph's rows) holding a smaller one (a mini-batch sample's).
  void upload_front(std::span<const T> host) {
    GCNLAB_ASSERT(host.size() <= size_);
    if (!host.empty()) alloc_->copy_to_device(data_, host.data(), host.size() * sizeof(T));
  }
  std::vector<T> download() const {
    std::vector<T> host(size_);
    if (size_) alloc_->copy_to_host(host.data(), data_, size_ * sizeof(T));
    return host;
  }

 private:
  void release() {
    if (alloc_) alloc_->deallocate(data_, size_ * sizeof(T));
    alloc_ = nullptr;
    data_ = nullptr;
    size_ = 0;
  }
  void swap(Buffer& o) noexcept {
    std::swap(alloc_, o.alloc_);
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
  }

  Allocator* alloc_ = nullptr;
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

template <class T>
Buffer<T> make_buffer(Allocator& a, std::span<const T> host) {
  Buffer<T> b(a, host.size());
  b.upload(host);
  return b;
}

}  // namespace gcnlab

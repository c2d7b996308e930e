#pragma once
// Memory owned by a backend: host memory for the CPU backend, device memory
// (cudaMalloc) for the CUDA backend. Tracks current and peak bytes so that
// every run can report the peak memory per rank (DESIGN.md principle 5).

#include <algorithm>
#include <cstddef>
#include <optional>

namespace gcnlab {

class Allocator {
 public:
  virtual ~Allocator() = default;

  void* allocate(std::size_t bytes) {
    void* p = bytes ? do_allocate(bytes) : nullptr;
    current_ += bytes;
    peak_ = std::max(peak_, current_);
    return p;
  }
  void deallocate(void* p, std::size_t bytes) {
    if (p) do_deallocate(p, bytes);
    current_ -= bytes;
  }

  std::size_t current_bytes() const { return current_; }
  std::size_t peak_bytes() const { return peak_; }
  void reset_peak() { peak_ = current_; }

  // Memory this allocator can still hand out, where the device knows it
  // (cudaMemGetInfo); nullopt for host memory (see common/core/host_memory.hpp).
  virtual std::optional<std::size_t> free_bytes() const { return std::nullopt; }

  // Host <-> backend memory transfers (plain memcpy on the CPU backend).
  virtual void copy_to_device(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_on_device(void* dst, const void* src, std::size_t bytes) = 0;

 protected:
  virtual void* do_allocate(std::size_t bytes) = 0;
  virtual void do_deallocate(void* p, std::size_t bytes) = 0;

 private:
  std::size_t current_ = 0;
  std::size_t peak_ = 0;
};

}  // namespace gcnlab

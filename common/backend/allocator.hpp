#pragma once
// Memory owned by a backend: host memory for the CPU backend, device memory
// (cudaMalloc) for the CUDA backend. Tracks current and peak bytes so that
// every run can report the peak memory per rank (docs/design.md principle 5).

#include <algorithm>
#include <cstddef>
#include <optional>
#include <unordered_map>

namespace gcnlab {

class Allocator {
 public:
  virtual ~Allocator() = default;

  void* allocate(std::size_t bytes) {
    void* p = bytes ? (misalign_ ? allocate_shifted(bytes) : do_allocate(bytes)) : nullptr;
    current_ += bytes;
    peak_ = std::max(peak_, current_);
    return p;
  }
  void deallocate(void* p, std::size_t bytes) {
    if (p) {
      const auto shifted = shifts_.find(p);
      if (shifted == shifts_.end()) do_deallocate(p, bytes);
      else do_deallocate(static_cast<char*>(p) - shifted->second, bytes + kMaxShift), shifts_.erase(shifted);
    }
    current_ -= bytes;
  }

  // Test-only: every later allocation lies 8 to 56 bytes past the alignment the
  // backend would give it, a different offset each time (tests/mpi/
  // test_determinism.cpp: no result may depend on where a buffer lies, e.g. a
  // vectorised loop that peels to alignment). The reported bytes are unchanged.
  void misalign_for_testing(bool on) { misalign_ = on; }

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
  static constexpr std::size_t kMaxShift = 64;
  void* allocate_shifted(std::size_t bytes) {
    const std::size_t shift = 8 * (1 + shifted_count_++ % 7);  // 8-byte steps keep int64 and double aligned
    void* p = static_cast<char*>(do_allocate(bytes + kMaxShift)) + shift;
    shifts_[p] = shift;
    return p;
  }

  std::size_t current_ = 0;
  std::size_t peak_ = 0;
  bool misalign_ = false;
  std::size_t shifted_count_ = 0;
  std::unordered_map<void*, std::size_t> shifts_;  // misaligned allocations: their shift
};

}  // namespace gcnlab

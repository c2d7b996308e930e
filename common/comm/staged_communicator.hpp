#pragma once
// A communicator over MPI for buffers MPI cannot read where they are: every
// call copies its device input into host buffers, runs the MPI communicator's
// own hook on them and copies the output back (issue 63: `--gpu-comm mpi`, the
// CUDA backend's transport where NCCL is not wanted or cannot run, e.g. several
// ranks on one GPU). The bytes on the wire and the ledger's record are those of
// the public call, exactly as for NCCL or MPI: only the do_* hooks are
// replaced. The staging copies' time (with their completion) is charged to
// Category::staging, their bytes as its payload, and not to the call.
//
// What moves the bytes is a Stager: the CUDA backend's copies on its stream
// into pinned host memory (backends/cuda), or plain memcpy (HostStager), with
// which the CPU tests run every strategy through this same code. A Stager whose
// on_device() is false for a pointer (host buffers: metric reductions, index
// lists; or every pointer, where MPI is CUDA-aware) sends it to MPI as it is.
//
// The host buffers are owned here, grow to the largest call and are reused
// (one for what is sent, one for what is received); split() children share the
// Stager and have their own buffers.

#include <algorithm>
#include <cstddef>
#include <memory>

#include "common/comm/mpi_communicator.hpp"

namespace gcnlab {

class Stager {
 public:
  virtual ~Stager() = default;
  // Whether `p` must be staged (device memory MPI cannot read).
  virtual bool on_device(const void* p) const = 0;
  // Host memory for staging (pinned where it speeds the copies).
  virtual void* allocate_host(std::size_t bytes) = 0;
  virtual void free_host(void* p, std::size_t bytes) = 0;
  // Copies ordered after the work that produced their input (the compute
  // stream); complete when wait() returns.
  virtual void to_host(void* host, const void* device, std::size_t bytes) = 0;
  virtual void to_device(void* device, const void* host, std::size_t bytes) = 0;
  virtual void wait() = 0;

  // The host memory its StagingBuffers hold, now and at most (every
  // communicator sharing this stager: a world and its splits).
  void held(std::ptrdiff_t delta) {
    held_ = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(held_) + delta);
    peak_ = std::max(peak_, held_);
  }
  std::size_t held_bytes() const { return held_; }
  std::size_t peak_bytes() const { return peak_; }

 private:
  std::size_t held_ = 0, peak_ = 0;
};

// memcpy, every pointer staged: the host stand-in of a device (tests, and
// what the CPU checks of this transport run on).
class HostStager final : public Stager {
 public:
  bool on_device(const void* p) const override { return p != nullptr; }
  void* allocate_host(std::size_t bytes) override;
  void free_host(void* p, std::size_t bytes) override;
  void to_host(void* host, const void* device, std::size_t bytes) override;
  void to_device(void* device, const void* host, std::size_t bytes) override;
  void wait() override {}
};

// A grow-only host buffer of a Stager.
class StagingBuffer {
 public:
  explicit StagingBuffer(Stager& s) : stager_(&s) {}
  ~StagingBuffer() { release(); }
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;
  // At least `bytes` (the contents are not kept when it grows).
  char* at_least(std::size_t bytes);
  std::size_t capacity() const { return bytes_; }
  std::int64_t allocations() const { return allocations_; }

 private:
  void release();
  Stager* stager_;
  char* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::int64_t allocations_ = 0;
};

class StagedCommunicator final : public Communicator {
 public:
  StagedCommunicator(std::unique_ptr<MpiCommunicator> mpi, std::shared_ptr<Stager> stager);

  int rank() const override { return mpi_->rank(); }
  int size() const override { return mpi_->size(); }
  std::unique_ptr<Communicator> split(int color, int key) const override;
  double staging_host_bytes() const override { return static_cast<double>(stager_->peak_bytes()); }

  // The staging buffers' capacity in bytes and how often they were (re)allocated.
  std::size_t staging_bytes() const { return send_.capacity() + recv_.capacity(); }
  std::int64_t staging_allocations() const { return send_.allocations() + recv_.allocations(); }

 protected:
  void do_broadcast(void* buf, std::size_t count, DType t, int root) override;
  void do_allreduce(void* buf, std::size_t count, DType t, ReduceOp op) override;
  void do_allgather(const void* send, void* recv, std::size_t count, DType t) override;
  void do_allgatherv(const void* send, void* recv, const std::int64_t* counts, DType t) override;
  void do_reduce_scatter(const void* send, void* recv, std::size_t count, DType t) override;
  void do_reduce_scatterv(const void* send, void* recv, const std::int64_t* counts, DType t) override;
  void do_alltoallv(const void* send, const std::int64_t* send_counts, const std::int64_t* send_displs, void* recv,
                    const std::int64_t* recv_counts, const std::int64_t* recv_displs, DType t) override;
  void do_exchange(const std::vector<Message<const void>>& sends, const std::vector<Message<void>>& recvs,
                   DType t) override;
  void do_barrier() override { mpi_->do_barrier(); }
  // Blocking (the staging copies must complete on both sides of MPI's call);
  // the base class's default completes them at once.

 private:
  // The host address MPI reads `bytes` of `p` from (`p` itself, or a copy in `buf`).
  const void* readable(const void* p, std::size_t bytes, StagingBuffer& buf);
  // The host address MPI writes `bytes` of `p` to; written back by finish().
  void* writable(void* p, std::size_t bytes, StagingBuffer& buf);
  void finish(void* p, const void* host, std::size_t bytes);
  // Runs `copies` (to_host / to_device calls moving `bytes`) and waits for
  // them, the time charged to Category::staging (none where bytes = 0).
  template <class F>
  void staged(std::size_t bytes, F&& copies);

  std::unique_ptr<MpiCommunicator> mpi_;
  std::shared_ptr<Stager> stager_;
  StagingBuffer send_, recv_;
};

}  // namespace gcnlab

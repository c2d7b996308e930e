#include "common/comm/staged_communicator.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace gcnlab {

namespace {

// Σ counts[r] elements of `e` bytes over the p ranks.
std::size_t total_bytes(const std::int64_t* counts, int p, std::size_t e) {
  std::size_t total = 0;
  for (int r = 0; r < p; ++r) total += static_cast<std::size_t>(counts[r]) * e;
  return total;
}

}  // namespace

void* HostStager::allocate_host(std::size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) throw std::bad_alloc();
  return p;
}
void HostStager::free_host(void* p, std::size_t) { std::free(p); }
void HostStager::to_host(void* host, const void* device, std::size_t bytes) { std::memcpy(host, device, bytes); }
void HostStager::to_device(void* device, const void* host, std::size_t bytes) { std::memcpy(device, host, bytes); }

char* StagingBuffer::at_least(std::size_t bytes) {
  if (bytes > bytes_) {
    release();
    const std::size_t grown = std::max(bytes, bytes_ + bytes_ / 2);  // amortised growth over uneven calls
    data_ = static_cast<char*>(stager_->allocate_host(grown));
    bytes_ = grown;
    stager_->held(static_cast<std::ptrdiff_t>(grown));
    ++allocations_;
  }
  return data_;
}

void StagingBuffer::release() {
  if (data_) {
    stager_->free_host(data_, bytes_);
    stager_->held(-static_cast<std::ptrdiff_t>(bytes_));
  }
  data_ = nullptr;
  bytes_ = 0;
}

StagedCommunicator::StagedCommunicator(std::unique_ptr<MpiCommunicator> mpi, std::shared_ptr<Stager> stager)
    : Communicator(mpi->ledger()), mpi_(std::move(mpi)), stager_(std::move(stager)), send_(*stager_), recv_(*stager_) {
  members_ = mpi_->members();
}

std::unique_ptr<Communicator> StagedCommunicator::split(int color, int key) const {
  MPI_Comm child;
  GCNLAB_MPI(MPI_Comm_split(mpi_->native(), color, key, &child));
  return std::make_unique<StagedCommunicator>(std::make_unique<MpiCommunicator>(child, ledger(), true), stager_);
}

template <class F>
void StagedCommunicator::staged(std::size_t bytes, F&& copies) {
  if (bytes == 0) return copies();  // nothing staged (host buffers)
  const auto start = Ledger::Clock::now();
  copies();
  stager_->wait();
  add_staging(std::chrono::duration<double>(Ledger::Clock::now() - start).count(), static_cast<double>(bytes));
}

const void* StagedCommunicator::readable(const void* p, std::size_t bytes, StagingBuffer& buf) {
  if (bytes == 0 || !stager_->on_device(p)) return p;
  char* host = buf.at_least(bytes);
  staged(bytes, [&] { stager_->to_host(host, p, bytes); });
  return host;
}

void* StagedCommunicator::writable(void* p, std::size_t bytes, StagingBuffer& buf) {
  if (bytes == 0 || !stager_->on_device(p)) return p;
  return buf.at_least(bytes);
}

void StagedCommunicator::finish(void* p, const void* host, std::size_t bytes) {
  if (bytes == 0 || host == p) return;
  staged(bytes, [&] { stager_->to_device(p, host, bytes); });
}

void StagedCommunicator::do_broadcast(void* buf, std::size_t count, DType t, int root) {
  const std::size_t bytes = count * dtype_size(t);
  void* host = rank() == root ? const_cast<void*>(readable(buf, bytes, send_)) : writable(buf, bytes, send_);
  mpi_->do_broadcast(host, count, t, root);
  if (rank() != root) finish(buf, host, bytes);
}

void StagedCommunicator::do_allreduce(void* buf, std::size_t count, DType t, ReduceOp op) {
  const std::size_t bytes = count * dtype_size(t);
  void* host = const_cast<void*>(readable(buf, bytes, send_));
  mpi_->do_allreduce(host, count, t, op);
  finish(buf, host, bytes);
}

void StagedCommunicator::do_allgather(const void* send, void* recv, std::size_t count, DType t) {
  const std::size_t bytes = count * dtype_size(t), total = bytes * static_cast<std::size_t>(size());
  const void* in = readable(send, bytes, send_);
  void* out = writable(recv, total, recv_);
  mpi_->do_allgather(in, out, count, t);
  finish(recv, out, total);
}

void StagedCommunicator::do_allgatherv(const void* send, void* recv, const std::int64_t* counts, DType t) {
  const std::size_t e = dtype_size(t), total = total_bytes(counts, size(), e);
  const void* in = readable(send, static_cast<std::size_t>(counts[rank()]) * e, send_);
  void* out = writable(recv, total, recv_);
  mpi_->do_allgatherv(in, out, counts, t);
  finish(recv, out, total);
}

void StagedCommunicator::do_reduce_scatter(const void* send, void* recv, std::size_t count, DType t) {
  const std::size_t bytes = count * dtype_size(t);
  const void* in = readable(send, bytes * static_cast<std::size_t>(size()), send_);
  void* out = writable(recv, bytes, recv_);
  mpi_->do_reduce_scatter(in, out, count, t);
  finish(recv, out, bytes);
}

void StagedCommunicator::do_reduce_scatterv(const void* send, void* recv, const std::int64_t* counts, DType t) {
  const std::size_t e = dtype_size(t), total = total_bytes(counts, size(), e);
  const std::size_t mine = static_cast<std::size_t>(counts[rank()]) * e;
  const void* in = readable(send, total, send_);
  void* out = writable(recv, mine, recv_);
  mpi_->do_reduce_scatterv(in, out, counts, t);
  finish(recv, out, mine);
}

void StagedCommunicator::do_alltoallv(const void* send, const std::int64_t* send_counts,
                                      const std::int64_t* send_displs, void* recv, const std::int64_t* recv_counts,
                                      const std::int64_t* recv_displs, DType t) {
  const std::size_t e = dtype_size(t);
  std::int64_t send_end = 0, recv_end = 0;  // the extents the displacements address
  for (int r = 0; r < size(); ++r) {
    if (send_counts[r] > 0) send_end = std::max(send_end, send_displs[r] + send_counts[r]);
    if (recv_counts[r] > 0) recv_end = std::max(recv_end, recv_displs[r] + recv_counts[r]);
  }
  const std::size_t in_bytes = static_cast<std::size_t>(send_end) * e, out_bytes = static_cast<std::size_t>(recv_end) * e;
  const void* in = readable(send, in_bytes, send_);
  void* out = writable(recv, out_bytes, recv_);
  if (out != recv && out_bytes > 0)  // keep what no peer writes (gaps between the received blocks)
    staged(out_bytes, [&] { stager_->to_host(out, recv, out_bytes); });
  mpi_->do_alltoallv(in, send_counts, send_displs, out, recv_counts, recv_displs, t);
  finish(recv, out, out_bytes);
}

void StagedCommunicator::do_exchange(const std::vector<Message<const void>>& sends,
                                     const std::vector<Message<void>>& recvs, DType t) {
  // Every staged message at its own offset of one buffer per direction, 64-byte aligned.
  const std::size_t e = dtype_size(t);
  const auto slot = [e](std::size_t count) { return (count * e + 63) / 64 * 64; };
  std::size_t in_bytes = 0, out_bytes = 0, sent = 0;
  for (const auto& m : sends)
    if (stager_->on_device(m.data)) in_bytes += slot(m.count), sent += m.count * e;
  for (const auto& m : recvs)
    if (stager_->on_device(m.data)) out_bytes += slot(m.count);
  char* in = in_bytes ? send_.at_least(in_bytes) : nullptr;
  char* out = out_bytes ? recv_.at_least(out_bytes) : nullptr;
  std::vector<Message<const void>> host_sends;
  std::vector<Message<void>> host_recvs;
  std::size_t copied = 0;
  staged(sent, [&] {
    for (const auto& m : sends) {
      if (m.count > 0 && stager_->on_device(m.data)) {
        stager_->to_host(in, m.data, m.count * e);
        host_sends.push_back({m.peer, in, m.count});
        in += slot(m.count);
      } else {
        host_sends.push_back(m);
      }
    }
  });
  for (const auto& m : recvs) {
    if (m.count > 0 && stager_->on_device(m.data)) {
      host_recvs.push_back({m.peer, out, m.count});
      out += slot(m.count);
      copied += m.count * e;
    } else {
      host_recvs.push_back(m);
    }
  }
  mpi_->do_exchange(host_sends, host_recvs, t);
  staged(copied, [&] {
    for (std::size_t k = 0; k < recvs.size(); ++k)
      if (host_recvs[k].data != recvs[k].data) stager_->to_device(recvs[k].data, host_recvs[k].data, recvs[k].count * e);
  });
}

}  // namespace gcnlab

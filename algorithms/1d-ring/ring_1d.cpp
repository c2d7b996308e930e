#include "algorithms/1d-ring/ring_1d.hpp"

#include "common/dist/block_rows.hpp"

namespace gcnlab {

std::string Ring1DStrategy::describe() const {
  return "1d-ring (CAGNET Alg. 1, blocks passed around a ring): " + layout_summary();
}

void Ring1DStrategy::setup(const Graph& g, const Architecture& arch) {
  OneDStrategy::setup(g, arch);
  second_ = Buffer<float>(backend_, stage_.size());
}

void Ring1DStrategy::row_spmm(const std::vector<BroadcastStage>& stages, ConstView in, View out) {
  const int p = world_.size(), me = world_.rank();
  const int right = (me + 1) % p, left = (me + p - 1) % p;
  const std::int64_t f = out.cols;
  GCNLAB_ASSERT(in.ld == f && in.rows == stages[me].rows);
  float* receive[2] = {stage_.data(), second_.data()};
  ConstView held = in;  // X_j, j = (me - s) mod p
  for (int s = 0; s < p; ++s) {
    const int j = (me - s + p) % p, next = (j + p - 1) % p;  // held, and the block that arrives from the left
    Communicator::Pending arriving;
    if (s + 1 < p)
      arriving = world_.iexchange<float>({{right, held.data, static_cast<std::size_t>(held.rows * f)}},
                                         {{left, receive[s % 2], static_cast<std::size_t>(stages[next].rows * f)}},
                                         Category::p2p);
    {
      auto t = ledger_.time(Category::spmm);
      backend_.spmm(*stages[j].block, held, out, s == 0 ? 0.f : 1.f);
    }
    if (s + 1 < p) {
      arriving.wait();
      held = ConstView{receive[s % 2], stages[next].rows, f, f};
    }
  }
}

double Ring1DStrategy::ring_bytes(std::int64_t f) const {
  double bytes = 0;
  for (int j = 0; j < world_.size(); ++j)
    if (j != world_.rank()) bytes += static_cast<double>(offsets_[j + 1] - offsets_[j]) * f * sizeof(float);
  return bytes;
}

void Ring1DStrategy::aggregate_bytes(int, Direction, std::int64_t cols, ByteModel& m) const {
  m.add(Category::p2p, world_, ring_bytes(cols));
}

MemoryNeed Ring1DStrategy::memory_need() const {
  MemoryNeed m = OneDStrategy::memory_need();  // the blocks and one receive buffer
  m.buffers += bytes_of<float>(static_cast<std::int64_t>(second_.size()));
  return m;
}

}  // namespace gcnlab

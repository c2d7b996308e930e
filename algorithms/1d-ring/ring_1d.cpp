#include "algorithms/1d-ring/ring_1d.hpp"

#include <algorithm>

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

std::unique_ptr<ColumnExchange> Ring1DStrategy::attention_exchange(std::int64_t widest) {
  return std::make_unique<RingColumns>(backend_, world_, offsets_, widest);
}

RingColumns::RingColumns(Backend& backend, Communicator& group, std::vector<std::int64_t> offsets,
                         std::int64_t widest)
    : backend_(&backend), group_(&group), offsets_(std::move(offsets)),
      positions_(position_range(0, offsets_.back())) {
  arriving_ = Buffer<float>(backend, static_cast<std::size_t>(block_extent(offsets_).second * widest));
}

void RingColumns::gather(ConstView local, View all) {
  const int p = group_->size(), me = group_->rank();
  const std::int64_t w = local.cols;
  GCNLAB_ASSERT(local.ld == w && all.ld == w && local.rows == rows_of(me));
  const auto block = [&](int r) { return all.data + offsets_[r] * w; };
  {
    auto t = group_->ledger().time(Category::pack);
    backend_->copy(local, View{block(me), local.rows, w, w});
  }
  for (int s = 0; s + 1 < p; ++s) {  // pass on the block held (me - s), receive (me - s - 1)
    const int held = (me - s + p) % p, next = (me - s - 1 + p) % p;
    group_->exchange<float>({{(me + 1) % p, block(held), static_cast<std::size_t>(rows_of(held) * w)}},
                            {{(me + p - 1) % p, block(next), static_cast<std::size_t>(rows_of(next) * w)}},
                            Category::p2p);
  }
}

void RingColumns::scatter_sum(View partial, View local) {
  const int p = group_->size(), me = group_->rank();
  const std::int64_t w = local.cols;
  GCNLAB_ASSERT(partial.ld == w && local.ld == w && local.rows == rows_of(me));
  const auto block = [&](int r) { return partial.data + offsets_[r] * w; };
  // Step s: send block (me - s - 1)'s sum so far, receive block (me - s - 2)'s and add this rank's share.
  for (int s = 0; s + 1 < p; ++s) {
    const int sent = (me - s - 1 + 2 * p) % p, got = (me - s - 2 + 2 * p) % p;
    const std::int64_t n = rows_of(got) * w;
    group_->exchange<float>({{(me + 1) % p, block(sent), static_cast<std::size_t>(rows_of(sent) * w)}},
                            {{(me + p - 1) % p, arriving_.data(), static_cast<std::size_t>(n)}}, Category::p2p);
    auto t = group_->ledger().time(Category::spmm);
    backend_->axpy(1.f, ConstView{arriving_.data(), rows_of(got), w, w}, View{block(got), rows_of(got), w, w});
  }
  auto t = group_->ledger().time(Category::pack);
  backend_->copy(ConstView{block(me), local.rows, w, w}, local);
}

void RingColumns::gather_bytes(std::int64_t width, ByteModel& m) const {
  const int me = group_->rank();
  m.add(Category::p2p, *group_, static_cast<double>(offsets_.back() - rows_of(me)) * width * sizeof(float));
}

void RingColumns::scatter_sum_bytes(std::int64_t width, ByteModel& m) const {
  const int p = group_->size(), left = (group_->rank() + p - 1) % p;
  if (p > 1) m.add(Category::p2p, *group_, static_cast<double>(offsets_.back() - rows_of(left)) * width * sizeof(float));
}

}  // namespace gcnlab

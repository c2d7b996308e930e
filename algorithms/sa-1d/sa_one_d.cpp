#include "algorithms/sa-1d/sa_one_d.hpp"

#include <algorithm>

#include "common/comm/wire.hpp"
#include "common/dist/block_rows.hpp"
#include "common/dist/column_sums.hpp"
#include "common/dist/needed_rows.hpp"
#include "common/core/blocks.hpp"
#include "common/data/graph.hpp"

namespace gcnlab {

SaOneDStrategy::SaOneDStrategy(const StrategyOptions& opts, const StrategyContext& ctx)
    : world_(ctx.world), backend_(ctx.backend), ledger_(ctx.world.ledger()) {
  order_spec_ = opts.order;
  elide_ = opts.on_off_option("elide");
  GCNLAB_CHECK(opts.grid.empty() || (opts.grid.size() == 1 && opts.grid[0] == world_.size()),
               "--algo sa-1d needs --grid P with P = {} (the number of ranks)", world_.size());
}

std::string SaOneDStrategy::describe() const {
  return fmt::format(
      "sa-1d (SA Alg. 1): {} ranks, block rows of {}..{} rows, W replicated; rank {} holds {} rows (nnz {}) and "
      "receives {} rows of H per forward SpMM",
      world_.size(), block_extent(offsets_).first, block_extent(offsets_).second, world_.rank(),
      layouts_[0].vertices.size(), nnz_local_, fwd_.rows.received());
}

SaOneDStrategy::Exchange SaOneDStrategy::build(const HostCsr& rows, const NeededRows& need) {
  const int p = world_.size(), me = world_.rank();
  Exchange e;
  // the own block reads X in place: keep its plain local columns
  e.diagonal = upload(backend_, extract_block(rows, 0, rows.rows, offsets_[me], offsets_[me + 1]),
                      RowStorage::sparse_if_smaller);
  std::vector<int> others;
  for (int j = 0; j < p; ++j)
    if (j != me) others.push_back(j);
  e.remote = upload(backend_, compact_columns(rows, offsets_, need, others), RowStorage::sparse_if_smaller);

  // Tell every owner which of its rows this rank needs (once, setup phase).
  e.rows = plan_row_exchange(world_, need);
  e.send_rows = make_buffer<std::int64_t>(backend_, e.rows.send_rows);
  return e;
}

void SaOneDStrategy::setup(const Graph& g, const Architecture& arch) {
  const std::vector<std::int64_t>& dims = arch.dims;
  const int p = world_.size(), me = world_.rank();
  dims_ = dims;
  wcols_ = arch.weight_cols();
  orders_ = parse_orders(order_spec_, dims);
  asymmetric_ = !g.symmetric();
  offsets_ = row_blocks(g, p);
  GCNLAB_CHECK(offsets_[me + 1] > offsets_[me], "sa-1d: block row {} is empty", me);
  layouts_ = block_row_layouts(g, offsets_[me], offsets_[me + 1], dims);
  const HostCsr rows = g.block(Direction::forward, offsets_[me], offsets_[me + 1], 0, g.n());
  const NeededRows need = needed_rows(rows, offsets_);
  fwd_ = build(rows, need);
  if (asymmetric_) {
    const HostCsr back = g.block(Direction::backward, offsets_[me], offsets_[me + 1], 0, g.n());
    bwd_ = build(back, needed_rows(back, offsets_));
  }
  // Graph attention: the edge tensors on the block row, its needed columns exchanged as the SpMM's are.
  if (arch.attends())
    attention_ = GatheredAttention(
        backend_, world_.ledger(), g, arch, rows, offsets_[me], 0,
        std::make_unique<NeededColumns>(backend_, world_, offsets_, fwd_.rows, need, GatheredAttention::widest(arch)),
        elide_);
  nnz_local_ = fwd_.diagonal.nnz + fwd_.remote.nnz;
  const Exchange& b = asymmetric_ ? bwd_ : fwd_;
  const std::int64_t fmax = *std::max_element(dims.begin(), dims.end());
  send_ = Buffer<float>(backend_, static_cast<std::size_t>(std::max(fwd_.rows.sent(), b.rows.sent()) * fmax));
  recv_ = Buffer<float>(backend_, static_cast<std::size_t>(std::max(fwd_.rows.received(), b.rows.received()) * fmax));
}

MemoryNeed SaOneDStrategy::memory_need() const {
  // Per direction: Â(ᵀ)_ii, the compacted remote part, the rows this rank sends (SA Alg. 1).
  MemoryNeed m;
  const Exchange& b = asymmetric_ ? bwd_ : fwd_;
  for (const Exchange* e : asymmetric_ ? std::vector{&fwd_, &bwd_} : std::vector{&fwd_})
    m.graph += csr_bytes(e->diagonal) + csr_bytes(e->remote) + bytes_of<std::int64_t>(e->rows.sent());
  const std::int64_t fmax = *std::max_element(dims_.begin(), dims_.end());
  m.buffers = bytes_of<float>((std::max(fwd_.rows.sent(), b.rows.sent()) + std::max(fwd_.rows.received(), b.rows.received())) * fmax) +
              attention_.bytes();
  return m;
}

void SaOneDStrategy::spmm(const Exchange& e, ConstView x, View y) {
  const int p = world_.size();
  const std::int64_t f = x.cols;
  const auto nsend = static_cast<std::int64_t>(e.send_rows.size());
  {
    auto s = ledger_.time(Category::pack);
    backend_.gather_rows(x, e.send_rows.data(), View{send_.data(), nsend, f, f});
  }
  std::vector<std::int64_t> sc(p), sd(p), rc(p), rd(p);
  for (int j = 0; j < p; ++j) {
    sc[j] = e.rows.send_counts[j] * f, sd[j] = e.rows.send_displs[j] * f;
    rc[j] = e.rows.recv_counts[j] * f, rd[j] = e.rows.recv_displs[j] * f;
  }
  world_.alltoallv(std::span<const float>(send_.data(), nsend * f), std::span<const std::int64_t>(sc),
                   std::span<const std::int64_t>(sd), std::span<float>(recv_.data(), e.rows.received() * f),
                   std::span<const std::int64_t>(rc), std::span<const std::int64_t>(rd), Category::alltoall);
  auto s = ledger_.time(Category::spmm);
  backend_.spmm(e.diagonal, x, y, 0.f);
  backend_.spmm(e.remote, ConstView{recv_.data(), e.rows.received(), f, f}, y, 1.f);
}

void SaOneDStrategy::aggregate(int, Direction d, ConstView in, View out) {
  spmm(d == Direction::backward && asymmetric_ ? bwd_ : fwd_, in, out);
}

void SaOneDStrategy::linear(int, ConstView x, ConstView w, View z) { multiply_weights(backend_, ledger_, x, w, z); }

void SaOneDStrategy::linear_backward(int, ConstView x, ConstView g, ConstView w, View dw, View* dx) {
  weight_and_input_gradients(backend_, ledger_, world_, x, g, w, dw, dx);
}

void SaOneDStrategy::aggregate_bytes(int, Direction d, std::int64_t cols, ByteModel& m) const {
  const Exchange& e = d == Direction::backward && asymmetric_ ? bwd_ : fwd_;
  m.add(Category::alltoall, world_, static_cast<double>(e.rows.received()) * static_cast<double>(cols) * sizeof(float));
}

void SaOneDStrategy::linear_backward_bytes(int l, bool, ByteModel& m) const {
  m.add(Category::allreduce, world_, weight_gradient_bytes(dims_[l], wcols_[l], world_.size()));
}

void SaOneDStrategy::sum_over_rows(int, View per_column) {
  sum_columns_over(world_, per_column);  // every rank holds one block row
}

void SaOneDStrategy::sum_over_rows_bytes(int, std::int64_t count, ByteModel& m) const {
  sum_columns_over_bytes(world_, count, m);
}

}  // namespace gcnlab

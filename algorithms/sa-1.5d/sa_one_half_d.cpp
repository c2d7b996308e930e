#include "algorithms/sa-1.5d/sa_one_half_d.hpp"

#include <algorithm>
#include <numeric>

#include "common/comm/wire.hpp"
#include "common/dist/block_rows.hpp"
#include "common/dist/column_sums.hpp"
#include "common/dist/needed_rows.hpp"
#include "common/dist/replicated_rows.hpp"
#include "common/core/blocks.hpp"
#include "common/data/graph.hpp"

namespace gcnlab {

SaOneHalfDStrategy::SaOneHalfDStrategy(const StrategyOptions& opts, const StrategyContext& ctx)
    : grid_(ctx.world, replicated_grid(opts, ctx.world.size()), {"r", "c"}),
      row_(grid_.along({"c"})),
      col_(grid_.along({"r"})),
      backend_(ctx.backend),
      ledger_(ctx.world.ledger()) {
  order_spec_ = opts.order;
  elide_ = opts.on_off_option("elide");
}

std::string SaOneHalfDStrategy::describe() const {
  const int R = grid_.dim("r"), c = grid_.dim("c");
  const auto [k0, k1] = stage_range(R, c, grid_.coord("c"));
  std::int64_t recv = 0;
  for (const Stage& s : fwd_) recv += s.recv_rows;
  return fmt::format(
      "sa-1.5d (SA Alg. 2): grid {} (R = {} block rows of {}..{} rows, replication c = {}), W replicated; rank {} = "
      "P({}, {}) runs stages {}..{} (nnz {}) and receives {} rows of H per forward SpMM",
      grid_.shape(), R, block_extent(offsets_).first, block_extent(offsets_).second, c, grid_.world().rank(),
      grid_.coord("r"), grid_.coord("c"), k0, k1 - 1, nnz_local_, recv);
}

std::vector<SaOneHalfDStrategy::Stage> SaOneHalfDStrategy::build(const HostCsr& rows, const NeededRows& need,
                                                                   RowRequests& req) {
  const int R = grid_.dim("r"), c = grid_.dim("c"), i = grid_.coord("r"), j = grid_.coord("c");
  const auto [k0, k1] = stage_range(R, c, j);

  // Requests to the roots of this column's stages: to column rank k, NnzCols(i, k).
  std::vector<std::vector<std::int64_t>> wanted(R);
  for (int k = k0; k < k1; ++k)
    if (k != i) wanted[k] = need.rows[k];
  req = exchange_requests(col_, wanted);

  std::vector<Stage> stages;
  for (int k = k0; k < k1; ++k) {
    Stage st;
    st.k = k;
    if (k == i) {  // the own block reads H_i in place; this rank is the root and serves the others
      st.block = upload(backend_, extract_block(rows, 0, rows.rows, offsets_[i], offsets_[i + 1]),
                        RowStorage::sparse_if_smaller);
      st.send_counts = req.counts;
      st.send_rows = make_buffer<std::int64_t>(backend_, req.rows);
    } else {
      st.block = upload(backend_, compact_columns(rows, offsets_, need, {k}), RowStorage::sparse_if_smaller);
      st.recv_rows = static_cast<std::int64_t>(need.rows[k].size());
    }
    stages.push_back(std::move(st));
  }
  return stages;
}

void SaOneHalfDStrategy::setup(const Graph& g, const Architecture& arch) {
  const std::vector<std::int64_t>& dims = arch.dims;
  const int R = grid_.dim("r"), i = grid_.coord("r");
  dims_ = dims;
  wcols_ = arch.weight_cols();
  orders_ = parse_orders(order_spec_, dims);
  asymmetric_ = !g.symmetric();
  offsets_ = row_blocks(g, R);
  GCNLAB_CHECK(offsets_[i + 1] > offsets_[i], "sa-1.5d: block row {} is empty", i);
  layouts_ = block_row_layouts(g, offsets_[i], offsets_[i + 1], dims);
  const HostCsr rows = g.block(Direction::forward, offsets_[i], offsets_[i + 1], 0, g.n());
  const NeededRows need = needed_rows(rows, offsets_);
  RowRequests requests;
  fwd_ = build(rows, need, requests);
  if (asymmetric_) {
    const HostCsr back = g.block(Direction::backward, offsets_[i], offsets_[i + 1], 0, g.n());
    RowRequests back_requests;
    bwd_ = build(back, needed_rows(back, offsets_), back_requests);
  }
  if (arch.attends()) {
    const auto [k0, k1] = stage_range(R, grid_.dim("c"), grid_.coord("c"));
    attention_ = GatheredAttention(backend_, ledger_, g, arch,
                                   extract_block(rows, 0, rows.rows, offsets_[k0], offsets_[k1]), offsets_[i],
                                   offsets_[k0],
                                   std::make_unique<SaChunkColumns>(backend_, row_, col_, offsets_, k0, k1, need,
                                                                    requests, GatheredAttention::widest(arch)),
                                   elide_);
  }
  nnz_local_ = 0;
  const auto [max_send, max_recv] = largest_exchange();
  for (const Stage& st : fwd_) nnz_local_ += st.block.nnz;
  const std::int64_t fmax = *std::max_element(dims.begin(), dims.end());
  send_ = Buffer<float>(backend_, static_cast<std::size_t>(max_send * fmax));
  recv_ = Buffer<float>(backend_, static_cast<std::size_t>(max_recv * fmax));
}

std::int64_t SaOneHalfDStrategy::Stage::sent_rows() const {
  return std::accumulate(send_counts.begin(), send_counts.end(), std::int64_t{0});
}

std::pair<std::int64_t, std::int64_t> SaOneHalfDStrategy::largest_exchange() const {
  std::int64_t max_send = 0, max_recv = 0;
  for (const auto* stages : {&fwd_, &bwd_})
    for (const Stage& st : *stages) {
      max_send = std::max(max_send, st.sent_rows());
      max_recv = std::max(max_recv, st.recv_rows);
    }
  return {max_send, max_recv};
}

MemoryNeed SaOneHalfDStrategy::memory_need() const {
  // Per stage: Â(ᵀ)_ik compacted onto NnzCols(i, k); the root's list of rows to send (SA Alg. 2).
  MemoryNeed m;
  for (const auto* stages : {&fwd_, &bwd_})
    for (const Stage& st : *stages) m.graph += csr_bytes(st.block) + bytes_of<std::int64_t>(st.sent_rows());
  const auto [max_send, max_recv] = largest_exchange();
  const std::int64_t fmax = *std::max_element(dims_.begin(), dims_.end());
  m.buffers = bytes_of<float>((max_send + max_recv) * fmax) + attention_.bytes();
  return m;
}

void SaOneHalfDStrategy::spmm(std::vector<Stage>& stages, ConstView x, View y) {
  const int i = grid_.coord("r");
  const std::int64_t f = y.cols;
  if (stages.empty()) {
    auto s = ledger_.time(Category::spmm);
    backend_.fill(y, 0.f);
  }
  for (std::size_t s = 0; s < stages.size(); ++s) {
    Stage& st = stages[s];
    std::vector<Message<const float>> sends;
    std::vector<Message<float>> recvs;
    if (st.k == i) {  // root: pack each column rank's rows and post the sends
      const auto total = static_cast<std::int64_t>(st.send_rows.size());
      {
        auto t = ledger_.time(Category::pack);
        backend_.gather_rows(x, st.send_rows.data(), View{send_.data(), total, f, f});
      }
      std::int64_t at = 0;
      for (int l = 0; l < static_cast<int>(st.send_counts.size()); ++l) {
        if (st.send_counts[l] > 0) sends.push_back({l, send_.data() + at * f, static_cast<std::size_t>(st.send_counts[l] * f)});
        at += st.send_counts[l];
      }
    } else if (st.recv_rows > 0) {
      recvs.push_back({st.k, recv_.data(), static_cast<std::size_t>(st.recv_rows * f)});
    }
    col_.exchange(sends, recvs, Category::p2p);
    auto t = ledger_.time(Category::spmm);
    const ConstView m = st.k == i ? x : ConstView{recv_.data(), st.recv_rows, f, f};
    backend_.spmm(st.block, m, y, s == 0 ? 0.f : 1.f);
  }
}

void SaOneHalfDStrategy::aggregate(int, Direction d, ConstView in, View out) {
  spmm(d == Direction::backward && asymmetric_ ? bwd_ : fwd_, in, out);
  row_.allreduce(std::span<float>(out.data, out.size()), ReduceOp::sum, Category::allreduce);
}

void SaOneHalfDStrategy::linear(int, ConstView x, ConstView w, View z) { multiply_weights(backend_, ledger_, x, w, z); }

void SaOneHalfDStrategy::linear_backward(int, ConstView x, ConstView g, ConstView w, View dw, View* dx) {
  weight_and_input_gradients(backend_, ledger_, col_, x, g, w, dw, dx);
}

void SaOneHalfDStrategy::aggregate_bytes(int, Direction d, std::int64_t cols, ByteModel& m) const {
  double received = 0;  // rows of the column's stages
  for (const Stage& st : d == Direction::backward && asymmetric_ ? bwd_ : fwd_) received += static_cast<double>(st.recv_rows);
  const double rows = static_cast<double>(layouts_[0].vertices.size()), f = static_cast<double>(cols);
  m.add(Category::p2p, col_, received * f * sizeof(float));
  m.add(Category::allreduce, row_, wire::allreduce(rows * f * sizeof(float), grid_.dim("c")));
}

void SaOneHalfDStrategy::linear_backward_bytes(int l, bool, ByteModel& m) const {
  m.add(Category::allreduce, col_, weight_gradient_bytes(dims_[l], wcols_[l], grid_.dim("r")));
}

void SaOneHalfDStrategy::sum_over_rows(int, View per_column) {
  sum_columns_over(col_, per_column);  // P(:, j) holds each block row once
}

void SaOneHalfDStrategy::sum_over_rows_bytes(int, std::int64_t count, ByteModel& m) const {
  sum_columns_over_bytes(col_, count, m);
}

// --- SaChunkColumns

SaChunkColumns::SaChunkColumns(Backend& backend, Communicator& row, Communicator& col,
                               const std::vector<std::int64_t>& offsets, int k0, int k1, const NeededRows& need,
                               const RowRequests& requests, std::int64_t widest)
    : ChunkExchange(backend, row, col, offsets, k0, k1, needed_positions(offsets, k0, k1, col.rank(), need)) {
  const int i = block_row();
  std::int64_t at = 0;
  for (int k = k0; k < k1; ++k) {
    segment_.push_back(at);
    rows_.push_back(k == i ? rows_of(k) : static_cast<std::int64_t>(need.rows[static_cast<std::size_t>(k)].size()));
    at += rows_.back();
  }
  if (in_chunk(i)) {
    send_counts_ = requests.counts;
    send_rows_ = make_buffer<std::int64_t>(backend, requests.rows);
    owners_ = ones_at_rows(backend, rows_of(i), requests.rows);
    sent_ = Buffer<float>(backend, requests.rows.size() * static_cast<std::size_t>(widest));
  }
}

double SaChunkColumns::bytes() const {
  return csr_bytes(owners_) + bytes_of<std::int64_t>(send_rows_.size()) + bytes_of<float>(sent_.size());
}

SaChunkColumns::Messages SaChunkColumns::messages(float* gathered, std::int64_t w) {
  Messages m;
  for (int k = k0_; k < k1_; ++k) {
    const auto s = static_cast<std::size_t>(k - k0_);
    if (k != block_row() && rows_[s] > 0)
      m.stages.push_back({k, gathered + segment_[s] * w, static_cast<std::size_t>(rows_[s] * w)});
  }
  std::int64_t at = 0;
  for (int l = 0; l < static_cast<int>(send_counts_.size()); ++l) {
    if (send_counts_[l] > 0)
      m.requests.push_back({l, sent_.data() + at * w, static_cast<std::size_t>(send_counts_[l] * w)});
    at += send_counts_[l];
  }
  return m;
}

namespace {
std::vector<Message<const float>> outgoing(const std::vector<Message<float>>& m) {
  std::vector<Message<const float>> out;
  for (const Message<float>& x : m) out.push_back({x.peer, x.data, x.count});
  return out;
}
}  // namespace

void SaChunkColumns::gather(ConstView local, View all) {
  const std::int64_t w = local.cols;
  const int i = block_row();
  GCNLAB_ASSERT(local.ld == w && all.ld == w && local.rows == rows_of(i) && all.rows == columns());
  if (in_chunk(i)) {  // the root of stage i: pack the rows each column rank needs; its own rows in place
    auto t = col_->ledger().time(Category::pack);
    backend_->gather_rows(local, send_rows_.data(),
                          View{sent_.data(), static_cast<std::int64_t>(send_rows_.size()), w, w});
    backend_->copy(local, View{all.data + segment_[static_cast<std::size_t>(i - k0_)] * w, local.rows, w, w});
  }
  const Messages m = messages(all.data, w);
  col_->exchange(outgoing(m.requests), m.stages, Category::p2p);
}

void SaChunkColumns::scatter_sum(View partial, View local) {
  const std::int64_t w = local.cols;
  const int i = block_row();
  GCNLAB_ASSERT(partial.ld == w && local.ld == w && local.rows == rows_of(i) && partial.rows == columns());
  const Messages m = messages(partial.data, w);  // each stage's partial sums back to its root
  col_->exchange(outgoing(m.stages), m.requests, Category::p2p);
  if (in_chunk(i)) {
    auto t = col_->ledger().time(Category::spmm);
    backend_->copy(ConstView{partial.data + segment_[static_cast<std::size_t>(i - k0_)] * w, local.rows, w, w}, local);
    backend_->spmm(owners_, ConstView{sent_.data(), static_cast<std::int64_t>(send_rows_.size()), w, w}, local, 1.f);
  }
  share_along_row(local);
}

void SaChunkColumns::gather_bytes(std::int64_t width, ByteModel& m) const {
  double rows = 0;
  for (int k = k0_; k < k1_; ++k)
    if (k != block_row()) rows += static_cast<double>(rows_[static_cast<std::size_t>(k - k0_)]);
  m.add(Category::p2p, *col_, rows * width * sizeof(float));
}

void SaChunkColumns::scatter_sum_bytes(std::int64_t width, ByteModel& m) const {
  m.add(Category::p2p, *col_, static_cast<double>(send_rows_.size()) * width * sizeof(float));
  share_along_row_bytes(width, m);
}

}  // namespace gcnlab

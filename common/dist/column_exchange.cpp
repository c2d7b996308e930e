#include "common/dist/column_exchange.hpp"

#include <numeric>

#include "common/comm/wire.hpp"
#include "common/core/error.hpp"
#include "common/dist/replicated_rows.hpp"

namespace gcnlab {

namespace {
std::span<const float> elements(ConstView v) {
  GCNLAB_ASSERT(v.ld == v.cols);
  return {v.data, static_cast<std::size_t>(v.size())};
}
std::span<float> elements(View v) {
  GCNLAB_ASSERT(v.ld == v.cols);
  return {v.data, static_cast<std::size_t>(v.size())};
}
}  // namespace

void ColumnExchange::reduce_rows(View, ReduceOp) {
  fail("internal: reduce_rows on an exchange whose ranks hold whole rows");
}

void ColumnExchange::reduce_rows_bytes(std::int64_t, ByteModel&) const {}

std::vector<std::int64_t> position_range(std::int64_t q0, std::int64_t q1) {
  std::vector<std::int64_t> q(static_cast<std::size_t>(q1 - q0));
  std::iota(q.begin(), q.end(), q0);
  return q;
}

std::vector<std::int64_t> needed_positions(const std::vector<std::int64_t>& offsets, int k0, int k1, int own,
                                           const NeededRows& need) {
  std::vector<std::int64_t> q;
  for (int k = k0; k < k1; ++k)
    if (k == own)
      for (std::int64_t r = offsets[k]; r < offsets[k + 1]; ++r) q.push_back(r);
    else
      for (const std::int64_t r : need.rows[static_cast<std::size_t>(k)]) q.push_back(offsets[k] + r);
  return q;
}

Csr ones_at_rows(Backend& backend, std::int64_t rows, const std::vector<std::int64_t>& rows_of_sent) {
  HostCsr o;
  o.rows = rows;
  o.cols = static_cast<std::int64_t>(rows_of_sent.size());
  o.rowptr.assign(static_cast<std::size_t>(rows + 1), 0);
  for (const std::int64_t r : rows_of_sent) ++o.rowptr[static_cast<std::size_t>(r + 1)];
  for (std::int64_t r = 0; r < rows; ++r) o.rowptr[r + 1] += o.rowptr[r];
  o.col.resize(rows_of_sent.size());
  o.val.assign(rows_of_sent.size(), 1.f);
  std::vector<std::int64_t> next(o.rowptr.begin(), o.rowptr.end() - 1);
  for (std::int64_t k = 0; k < o.cols; ++k) o.col[next[static_cast<std::size_t>(rows_of_sent[k])]++] = k;
  return upload(backend, o);
}

// --- AllGatherColumns

AllGatherColumns::AllGatherColumns(Communicator& group, std::vector<std::int64_t> offsets)
    : group_(&group), offsets_(std::move(offsets)), positions_(position_range(0, offsets_.back())) {}

std::int64_t AllGatherColumns::mine() const { return offsets_[group_->rank() + 1] - offsets_[group_->rank()]; }

std::vector<std::int64_t> AllGatherColumns::counts(std::int64_t width) const {
  std::vector<std::int64_t> c;
  for (std::size_t r = 0; r + 1 < offsets_.size(); ++r) c.push_back((offsets_[r + 1] - offsets_[r]) * width);
  return c;
}

void AllGatherColumns::gather(ConstView local, View all) {
  group_->allgather(elements(local), elements(all), counts(local.cols), Category::allgather);
}

void AllGatherColumns::scatter_sum(View partial, View local) {
  group_->reduce_scatter(std::span<const float>(elements(partial)), elements(local), counts(local.cols),
                         Category::reduce_scatter);
}

void AllGatherColumns::gather_bytes(std::int64_t width, ByteModel& m) const {
  m.add(Category::allgather, *group_, static_cast<double>(offsets_.back() - mine()) * width * sizeof(float));
}

void AllGatherColumns::scatter_sum_bytes(std::int64_t width, ByteModel& m) const {
  m.add(Category::reduce_scatter, *group_,
        wire::reduce_scatter(static_cast<double>(mine()) * width * sizeof(float), group_->size()));
}

// --- NeededColumns

NeededColumns::NeededColumns(Backend& backend, Communicator& group, const std::vector<std::int64_t>& offsets,
                             const RowExchange& plan, const NeededRows& need, std::int64_t widest)
    : backend_(&backend), group_(&group), plan_(plan) {
  const int p = group.size(), me = group.rank();
  own0_ = plan.recv_displs[me];  // the rows received from ranks before this one come first
  own_ = offsets[me + 1] - offsets[me];
  positions_ = needed_positions(offsets, 0, p, me, need);
  GCNLAB_ASSERT(columns() == own_ + plan.received());
  send_rows_ = make_buffer<std::int64_t>(backend, plan.send_rows);
  owners_ = ones_at_rows(backend, own_, plan.send_rows);  // the rows sent, in rank order
  send_ = Buffer<float>(backend, static_cast<std::size_t>(plan.sent() * widest));
}

double NeededColumns::bytes() const {
  return csr_bytes(owners_) + bytes_of<std::int64_t>(send_rows_.size()) + bytes_of<float>(send_.size());
}

NeededColumns::Counts NeededColumns::counts(std::int64_t width) const {
  const int p = group_->size(), me = group_->rank();
  Counts c;
  for (int j = 0; j < p; ++j) {
    c.send.push_back(plan_.send_counts[j] * width);
    c.send_displs.push_back(plan_.send_displs[j] * width);
    c.recv.push_back(plan_.recv_counts[j] * width);
    c.recv_displs.push_back((plan_.recv_displs[j] + (j > me ? own_ : 0)) * width);
  }
  return c;
}

void NeededColumns::gather(ConstView local, View all) {
  const std::int64_t w = local.cols;
  GCNLAB_ASSERT(local.ld == w && all.ld == w && all.rows == columns() && local.rows == own_);
  const View sent{send_.data(), plan_.sent(), w, w};
  {
    auto t = group_->ledger().time(Category::pack);
    backend_->gather_rows(local, send_rows_.data(), sent);
    backend_->copy(local, View{all.data + own0_ * w, own_, w, w});
  }
  const Counts c = counts(w);
  group_->alltoallv(std::span<const float>(elements(sent)), std::span<const std::int64_t>(c.send),
                    std::span<const std::int64_t>(c.send_displs), elements(all), std::span<const std::int64_t>(c.recv),
                    std::span<const std::int64_t>(c.recv_displs), Category::alltoall);
}

void NeededColumns::scatter_sum(View partial, View local) {
  const std::int64_t w = local.cols;
  GCNLAB_ASSERT(local.ld == w && partial.ld == w && partial.rows == columns() && local.rows == own_);
  const View back{send_.data(), plan_.sent(), w, w};  // the partial sums of the rows this rank sent
  const Counts c = counts(w);
  group_->alltoallv(std::span<const float>(elements(partial)), std::span<const std::int64_t>(c.recv),
                    std::span<const std::int64_t>(c.recv_displs), elements(back), std::span<const std::int64_t>(c.send),
                    std::span<const std::int64_t>(c.send_displs), Category::alltoall);
  auto t = group_->ledger().time(Category::spmm);
  backend_->copy(ConstView{partial.data + own0_ * w, own_, w, w}, local);
  backend_->spmm(owners_, back, local, 1.f);
}

void NeededColumns::gather_bytes(std::int64_t width, ByteModel& m) const {
  m.add(Category::alltoall, *group_, static_cast<double>(plan_.received()) * width * sizeof(float));
}

void NeededColumns::scatter_sum_bytes(std::int64_t width, ByteModel& m) const {
  m.add(Category::alltoall, *group_, static_cast<double>(plan_.sent()) * width * sizeof(float));
}

// --- ChunkExchange

ChunkExchange::ChunkExchange(Backend& backend, Communicator& row, Communicator& col, std::vector<std::int64_t> offsets,
                             int k0, int k1, std::vector<std::int64_t> positions)
    : backend_(&backend), row_(&row), col_(&col), offsets_(std::move(offsets)), positions_(std::move(positions)),
      k0_(k0), k1_(k1) {
  const int R = static_cast<int>(offsets_.size()) - 1, c = row.size(), i = block_row();
  owner_ = 0;
  while (stage_range(R, c, owner_).second <= i) ++owner_;
}

void ChunkExchange::reduce_rows(View values, ReduceOp op) {
  GCNLAB_ASSERT(values.ld == values.cols);
  row_->allreduce(std::span<float>(values.data, static_cast<std::size_t>(values.size())), op, Category::allreduce);
}

void ChunkExchange::reduce_rows_bytes(std::int64_t width, ByteModel& m) const {
  m.add(Category::allreduce, *row_,
        wire::allreduce(static_cast<double>(rows_of(block_row())) * width * sizeof(float), row_->size()));
}

void ChunkExchange::share_along_row(View local) {
  GCNLAB_ASSERT(local.ld == local.cols);
  if (row_->size() > 1)
    row_->broadcast(std::span<float>(local.data, static_cast<std::size_t>(local.size())), owner_,
                    Category::bcast_dense);
}

void ChunkExchange::share_along_row_bytes(std::int64_t width, ByteModel& m) const {
  const double mine = static_cast<double>(rows_of(block_row())) * width * sizeof(float);
  if (row_->size() > 1) m.add(Category::bcast_dense, *row_, wire::broadcast(mine, row_->rank() == owner_));
}

}  // namespace gcnlab

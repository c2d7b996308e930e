#include "common/dist/column_exchange.hpp"

#include <numeric>

#include "common/comm/wire.hpp"
#include "common/core/error.hpp"

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

// --- AllGatherColumns

AllGatherColumns::AllGatherColumns(Communicator& group, std::vector<std::int64_t> offsets)
    : group_(&group), offsets_(std::move(offsets)), positions_(static_cast<std::size_t>(offsets_.back())) {
  std::iota(positions_.begin(), positions_.end(), std::int64_t{0});
}

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
  for (int j = 0; j < p; ++j) {
    if (j == me) {
      for (std::int64_t r = 0; r < own_; ++r) positions_.push_back(offsets[j] + r);
      continue;
    }
    GCNLAB_ASSERT(static_cast<std::int64_t>(need.rows[j].size()) == plan.recv_counts[j]);
    for (const std::int64_t r : need.rows[j]) positions_.push_back(offsets[j] + r);
  }
  send_rows_ = make_buffer<std::int64_t>(backend, plan.send_rows);
  // owners_: local row x sent row, a one where the sent row is that local row;
  // each row's ones in the order they were sent (rank order): a fixed sum.
  HostCsr o;
  o.rows = own_;
  o.cols = plan.sent();
  o.rowptr.assign(static_cast<std::size_t>(own_ + 1), 0);
  for (const std::int64_t r : plan.send_rows) ++o.rowptr[static_cast<std::size_t>(r + 1)];
  for (std::int64_t r = 0; r < own_; ++r) o.rowptr[r + 1] += o.rowptr[r];
  o.col.resize(plan.send_rows.size());
  o.val.assign(plan.send_rows.size(), 1.f);
  std::vector<std::int64_t> next(o.rowptr.begin(), o.rowptr.end() - 1);
  for (std::int64_t k = 0; k < o.cols; ++k) o.col[next[static_cast<std::size_t>(plan.send_rows[k])]++] = k;
  owners_ = upload(backend, o);
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

}  // namespace gcnlab

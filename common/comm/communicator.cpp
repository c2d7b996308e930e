#include "common/comm/communicator.hpp"

#include "common/comm/byte_model.hpp"

#include <algorithm>
#include <numeric>

namespace gcnlab {

Members Members::of(std::vector<int> ranks) {
  const int n = static_cast<int>(ranks.size());
  GCNLAB_ASSERT(n >= 1);
  const int stride = n > 1 ? ranks[1] - ranks[0] : 1;
  for (int i = 0; i < n; ++i)
    if (ranks[static_cast<std::size_t>(i)] != ranks[0] + i * stride) return {ranks[0], 0, n, std::move(ranks)};
  return {ranks[0], stride, n, {}};
}

void ByteModel::add(Category c, const Members& group, double bytes) {
  if (bytes == 0) return;
  per_category_[static_cast<std::size_t>(c)] += bytes;
  for (Term& t : terms_)
    if (t.category == c && t.group == group) {
      t.bytes += bytes;
      return;
    }
  terms_.push_back({c, group, bytes});
}

ByteModel& ByteModel::operator+=(const ByteModel& o) {
  for (const Term& t : o.terms_) add(t.category, t.group, t.bytes);
  return *this;
}

int link_sharing(const Members& group, int world_rank, int ranks_per_node) {
  if (ranks_per_node <= 0) return 0;  // one node holds the job
  const int node = world_rank / ranks_per_node;
  int here = 0;
  for (int i = 0; i < group.count; ++i) here += group[i] / ranks_per_node == node;
  GCNLAB_ASSERT(here >= 1);  // the rank is a member
  return here == group.count ? 0 : std::max(1, ranks_per_node / here);
}

LinkBytes link_bytes(const ByteModel& model, int world_rank, int ranks_per_node) {
  LinkBytes out;
  for (const ByteModel::Term& t : model.terms()) {
    const int sharing = link_sharing(t.group, world_rank, ranks_per_node);
    auto& link = sharing == 0 ? out.intra : out.inter_weighted;
    link[static_cast<std::size_t>(t.category)] += t.bytes * std::max(1, sharing);
  }
  return out;
}

double LinkBytes::intra_total() const { return std::accumulate(intra.begin(), intra.end(), 0.0); }
double LinkBytes::inter_weighted_total() const {
  return std::accumulate(inter_weighted.begin(), inter_weighted.end(), 0.0);
}

ByteModel& ByteModel::operator*=(double s) {
  for (double& b : per_category_) b *= s;
  for (Term& t : terms_) t.bytes *= s;
  return *this;
}

Communicator::Timed::Timed(Communicator& comm, Category c, double payload, double wire)
    : comm_(comm), ledger_(comm.ledger()), category_(c) {
  GCNLAB_ASSERT(is_communication(c));
  comm_.timed_ = this;
  tally_.payload_bytes = payload;
  tally_.wire_bytes = wire;
  tally_.calls = 1;
  ledger_.mark_begin(c);
  ledger_.sync();
  start_ = Ledger::Clock::now();
}

Communicator::Timed::~Timed() {
  ledger_.sync();
  tally_.time_s = std::max(0.0, std::chrono::duration<double>(Ledger::Clock::now() - start_).count() - excluded_s_);
  ledger_.record(category_, tally_);
  ledger_.mark_end();
  comm_.timed_ = nullptr;
}

void Communicator::add_staging(double seconds, double bytes) {
  if (timed_) timed_->exclude(seconds);
  Tally t;
  t.time_s = seconds;
  t.payload_bytes = bytes;
  t.calls = 1;
  ledger().record(Category::staging, t);
}

bool Communicator::Pending::test() {
  if (!request_ || done_) return true;
  const auto start = Clock::now();
  const bool done = request_->test();
  const auto end = Clock::now();
  polled_s_ += std::chrono::duration<double>(end - start).count();
  if (done) done_ = end;
  return done;
}

void Communicator::Pending::wait() {
  if (!request_) return;
  ledger_->sync();
  const auto start = Clock::now();
  const std::unique_ptr<Request> r = std::move(request_);
  r->wait();
  ledger_->sync();
  const auto end = Clock::now();
  Tally t;
  t.time_s = std::chrono::duration<double>(end - start).count() + polled_s_;
  const double wall = std::chrono::duration<double>(done_.value_or(end) - posted_).count();
  t.hidden_s = std::max(0.0, wall - post_s_ - t.time_s);
  ledger_->record(category_, t);
}

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::u8: return 1;
    case DType::bf16: return 2;
  }
  return 0;
}

void reduce_bf16(bf16* acc, const bf16* x, std::size_t n, ReduceOp op) {
  for (std::size_t i = 0; i < n; ++i) acc[i] = to_bf16(combine(to_float(acc[i]), to_float(x[i]), op));
}

}  // namespace gcnlab

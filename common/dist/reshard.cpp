#include "common/dist/reshard.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace gcnlab {

namespace {

BlockRange intersect(BlockRange a, BlockRange b) {
  const std::int64_t first = std::max(a.first, b.first), end = std::min(a.end(), b.end());
  return {first, std::max<std::int64_t>(0, end - first)};
}

Rect intersect(const Rect& a, const Rect& b) { return {intersect(a.rows, b.rows), intersect(a.cols, b.cols)}; }

// The part of `x` (holding rectangle `at`) that is rectangle `r`.
template <class V>
V sub(V x, const Rect& at, const Rect& r) {
  return {x.data + (r.rows.first - at.rows.first) * x.ld + (r.cols.first - at.cols.first), r.rows.count,
          r.cols.count, x.ld};
}

}  // namespace

Reshard::Reshard(const std::vector<Rect>& from, const std::vector<Rect>& to, int me)
    : from_(from.at(me)), to_(to.at(me)), me_(me) {
  GCNLAB_ASSERT(from.size() == to.size());
  // the replicas of each distinct source rectangle, in rank order
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>, std::vector<int>> replicas;
  for (int r = 0; r < static_cast<int>(from.size()); ++r)
    if (!from[r].empty())
      replicas[{from[r].rows.first, from[r].rows.count, from[r].cols.first, from[r].cols.count}].push_back(r);
  for (int t = 0; t < static_cast<int>(to.size()); ++t)
    for (const auto& [key, ranks] : replicas) {
      const Rect piece = intersect(to[t], from[ranks.front()]);
      if (piece.empty()) continue;
      const bool own = std::find(ranks.begin(), ranks.end(), t) != ranks.end();
      const int sender = own ? t : ranks[static_cast<std::size_t>(t) % ranks.size()];
      if (sender == me_ && t == me_) local_.push_back(piece);
      else if (sender == me_) sends_.push_back({t, piece});
      else if (t == me_) recvs_.push_back({sender, piece});
    }
}

double Reshard::wire_bytes() const {
  double b = 0;
  for (const Piece& p : recvs_) b += static_cast<double>(p.r.rows.count * p.r.cols.count) * sizeof(float);
  return b;
}

double Reshard::sent_bytes() const {
  double b = 0;
  for (const Piece& p : sends_) b += static_cast<double>(p.r.rows.count * p.r.cols.count) * sizeof(float);
  return b;
}

std::int64_t Reshard::staging_elements() const {
  std::int64_t n = 0;
  for (const auto* list : {&sends_, &recvs_})
    for (const Piece& p : *list) n += p.r.rows.count * p.r.cols.count;
  return n;
}

void Reshard::run(Communicator& comm, Backend& backend, ConstView x, View y, bool accumulate, Dense& staging) const {
  GCNLAB_ASSERT(x.rows == from_.rows.count && x.cols == from_.cols.count && y.rows == to_.rows.count &&
                y.cols == to_.cols.count);
  if (staging.size() < staging_elements()) {
    staging = Dense();  // freed before the larger one is allocated
    staging = Dense(backend, 1, staging_elements());
  }
  auto place = [&](ConstView in, View out) {
    if (accumulate) backend.axpy(1.f, in, out);
    else backend.copy(in, out);
  };
  float* at = staging.data();
  std::vector<Message<const float>> sends;
  std::vector<Message<float>> recvs;
  for (const Piece& p : sends_) {  // packed contiguously
    const auto n = p.r.rows.count * p.r.cols.count;
    backend.copy(sub(x, from_, p.r), View{at, p.r.rows.count, p.r.cols.count, p.r.cols.count});
    sends.push_back({p.peer, at, static_cast<std::size_t>(n)});
    at += n;
  }
  float* const received = at;
  for (const Piece& p : recvs_) {
    const auto n = p.r.rows.count * p.r.cols.count;
    recvs.push_back({p.peer, at, static_cast<std::size_t>(n)});
    at += n;
  }
  for (const Rect& r : local_) place(sub(x, from_, r), sub(y, to_, r));
  if (comm.size() > 1) comm.exchange(sends, recvs, Category::alltoall);
  at = received;
  for (const Piece& p : recvs_) {
    place(ConstView{at, p.r.rows.count, p.r.cols.count, p.r.cols.count}, sub(y, to_, p.r));
    at += p.r.rows.count * p.r.cols.count;
  }
}

}  // namespace gcnlab

// `volume`: a partitioner that minimises the total communication volume *and*
// the maximum send volume of a part, in the spirit of Graph-VB (Acer et al.,
// used by SA Sec. 5):
//   1. METIS k-way with the total-volume objective (METIS_OBJTYPE_VOL);
//   2. boundary refinement of the bottleneck: repeatedly take the part p*
//      with the largest send volume and move one of its boundary vertices to
//      a neighbouring part q when (a) p*'s send volume drops, (b) no part it
//      touches reaches p*'s old send volume, and (c) q stays within the
//      balance bound (1 + ε) n / K (or METIS's own maximum, if larger).
// The send volume of part p is Σ_{v in p} (number of other parts holding a
// neighbour of v): the rows of H that p sends in a sparsity-aware SpMM. A
// move changes the connectivity of v and of its neighbours only; with counts
// of each vertex's neighbours per part, a candidate is scored exactly in
// O(degree) (memory n x K counts).

#include <algorithm>
#include <cmath>

#include "partitioners/methods.hpp"

namespace gcnlab {

namespace {

// Send volumes with per-vertex counts of neighbours in each part (n x K), so
// that scoring a move v: p -> q costs O(deg v).
class SendVolume {
 public:
  SendVolume(const HostCsr& s, std::vector<std::int32_t>& part, int parts)
      : s_(s), part_(part), k_(parts), count_(static_cast<std::size_t>(s.rows) * parts, 0), send_(parts, 0),
        size_(parts, 0) {
    for (std::int64_t v = 0; v < s.rows; ++v) {
      ++size_[part_[v]];
      for (std::int64_t k = s.rowptr[v]; k < s.rowptr[v + 1]; ++k) ++at(v, part_[s.col[k]]);
      send_[part_[v]] += connectivity(v);
    }
  }

  // Distinct parts other than part(w) among w's neighbours.
  std::int64_t connectivity(std::int64_t w) const {
    std::int64_t c = 0;
    for (int q = 0; q < k_; ++q) c += q != part_[w] && count_[w * k_ + q] > 0;
    return c;
  }

  // Send-volume changes per part if v moved from its part p to q: pairs (part, delta).
  std::vector<std::pair<int, std::int64_t>> delta(std::int64_t v, int q) const {
    const int p = part_[v];
    std::vector<std::pair<int, std::int64_t>> d;
    auto add = [&](int r, std::int64_t x) {
      if (x == 0) return;
      for (auto& [rr, xx] : d)
        if (rr == r) return void(xx += x);
      d.emplace_back(r, x);
    };
    // v itself: it stops counting q (if it had neighbours there) and starts counting p.
    const std::int64_t before = connectivity(v);
    const std::int64_t after = before - (at(v, q) > 0) + (at(v, p) > 0);
    add(p, -before);
    add(q, after);
    // each neighbour w loses one neighbour in p and gains one in q
    for (std::int64_t k = s_.rowptr[v]; k < s_.rowptr[v + 1]; ++k) {
      const std::int64_t w = s_.col[k];
      const int pw = part_[w];
      std::int64_t change = 0;
      if (p != pw && at(w, p) == 1) --change;  // w no longer sends to p
      if (q != pw && at(w, q) == 0) ++change;  // w now sends to q
      add(pw, change);
    }
    return d;
  }

  void move(std::int64_t v, int q, const std::vector<std::pair<int, std::int64_t>>& d) {
    const int p = part_[v];
    for (std::int64_t k = s_.rowptr[v]; k < s_.rowptr[v + 1]; ++k) {
      --at(s_.col[k], p);
      ++at(s_.col[k], q);
    }
    --size_[p];
    ++size_[q];
    part_[v] = q;
    for (const auto& [r, x] : d) send_[r] += x;
  }

  const std::vector<std::int64_t>& send() const { return send_; }
  const std::vector<std::int64_t>& size() const { return size_; }

 private:
  std::int32_t& at(std::int64_t w, int q) { return count_[w * k_ + q]; }
  std::int32_t at(std::int64_t w, int q) const { return count_[w * k_ + q]; }

  const HostCsr& s_;
  std::vector<std::int32_t>& part_;
  int k_;
  std::vector<std::int32_t> count_;
  std::vector<std::int64_t> send_, size_;
};

}  // namespace

Partition refine_max_send_volume(const HostCsr& s, Partition p, double imbalance, int max_passes) {
  const std::int64_t n = s.rows;
  const int K = p.parts;
  if (K <= 1) return p;
  SendVolume vol(s, p.part, K);
  const std::int64_t cap = std::max(*std::max_element(vol.size().begin(), vol.size().end()),
                                    static_cast<std::int64_t>(std::ceil((1 + imbalance) * n / K)));
  std::vector<std::int64_t> seen(K, -1);
  // A pass drains the current bottleneck part until another part becomes the
  // bottleneck or no improving move is left.
  for (int pass = 0; pass < max_passes; ++pass) {
    const auto& send = vol.send();
    const int top = static_cast<int>(std::max_element(send.begin(), send.end()) - send.begin());
    bool moved = false;
    for (std::int64_t v = 0; v < n; ++v) {
      if (p.part[v] != top || vol.size()[top] <= 1) continue;
      const std::int64_t old_max = send[top];
      std::int64_t best_gain = 0;
      int best_q = -1;
      std::vector<std::pair<int, std::int64_t>> best_delta;
      for (std::int64_t k = s.rowptr[v]; k < s.rowptr[v + 1]; ++k) {  // targets: the neighbours' parts
        const int q = p.part[s.col[k]];
        if (q == top || seen[q] == v || vol.size()[q] + 1 > cap) continue;
        seen[q] = v;
        auto d = vol.delta(v, q);
        std::int64_t gain = 0;
        bool ok = true;
        for (const auto& [pp, x] : d) {
          if (pp == top) gain = -x;
          else if (send[pp] + x >= old_max) ok = false;
        }
        if (ok && gain > best_gain) best_gain = gain, best_q = q, best_delta = std::move(d);
      }
      if (best_q < 0) continue;
      vol.move(v, best_q, best_delta);
      moved = true;
      if (*std::max_element(send.begin(), send.end()) > send[top]) break;  // another part is the bottleneck now
    }
    if (!moved) break;
  }
  return p;
}

}  // namespace gcnlab

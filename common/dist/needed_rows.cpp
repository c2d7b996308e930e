#include "common/dist/needed_rows.hpp"

#include <algorithm>

namespace gcnlab {

NeededRows needed_rows(const HostCsr& a, const std::vector<std::int64_t>& offsets) {
  const int blocks = static_cast<int>(offsets.size()) - 1;
  std::vector<bool> used(static_cast<std::size_t>(a.cols), false);
  for (std::int64_t c : a.col) used[c] = true;
  NeededRows out;
  out.rows.resize(blocks);
  for (int j = 0; j < blocks; ++j)
    for (std::int64_t c = offsets[j]; c < offsets[j + 1]; ++c)
      if (used[c]) out.rows[j].push_back(c - offsets[j]);
  return out;
}

HostCsr compact_columns(const HostCsr& a, const std::vector<std::int64_t>& offsets, const NeededRows& need,
                        const std::vector<int>& blocks) {
  HostCsr m;
  m.rows = a.rows;
  m.rowptr.assign(a.rows + 1, 0);
  std::vector<std::int64_t> shift(offsets.size() - 1, -1);  // -1: block not kept
  for (int b : blocks) shift[b] = m.cols, m.cols += static_cast<std::int64_t>(need.rows[b].size());
  for (std::int64_t r = 0; r < a.rows; ++r) {
    // the row's columns ascend, so its blocks come in order and the result's columns ascend too
    int b = 0;
    for (std::int64_t k = a.rowptr[r]; k < a.rowptr[r + 1]; ++k) {
      const std::int64_t c = a.col[k];
      while (offsets[b + 1] <= c) ++b;
      if (shift[b] < 0) continue;
      const auto& rows = need.rows[b];
      m.col.push_back(shift[b] + (std::lower_bound(rows.begin(), rows.end(), c - offsets[b]) - rows.begin()));
      m.val.push_back(a.val[k]);
    }
    m.rowptr[r + 1] = static_cast<std::int64_t>(m.col.size());
  }
  return m;
}

RowRequests exchange_requests(Communicator& group, const std::vector<std::vector<std::int64_t>>& wanted) {
  const int p = group.size();
  GCNLAB_ASSERT(static_cast<int>(wanted.size()) == p);
  std::vector<std::int64_t> want_counts(p), want_displs(p, 0), flat;
  for (int r = 0; r < p; ++r) {
    want_counts[r] = static_cast<std::int64_t>(wanted[r].size());
    if (r > 0) want_displs[r] = want_displs[r - 1] + want_counts[r - 1];
    flat.insert(flat.end(), wanted[r].begin(), wanted[r].end());
  }
  std::vector<std::int64_t> one(p, 1), slot(p);
  for (int r = 0; r < p; ++r) slot[r] = r;
  RowRequests out;
  out.counts.assign(p, 0);
  group.alltoallv(std::span<const std::int64_t>(want_counts), std::span<const std::int64_t>(one),
                  std::span<const std::int64_t>(slot), std::span<std::int64_t>(out.counts),
                  std::span<const std::int64_t>(one), std::span<const std::int64_t>(slot), Category::alltoall);
  std::vector<std::int64_t> displs(p, 0);
  for (int r = 1; r < p; ++r) displs[r] = displs[r - 1] + out.counts[r - 1];
  out.rows.resize(displs[p - 1] + out.counts[p - 1]);
  group.alltoallv(std::span<const std::int64_t>(flat), std::span<const std::int64_t>(want_counts),
                  std::span<const std::int64_t>(want_displs), std::span<std::int64_t>(out.rows),
                  std::span<const std::int64_t>(out.counts), std::span<const std::int64_t>(displs), Category::alltoall);
  return out;
}

RowExchange plan_row_exchange(Communicator& group, const NeededRows& need) {
  const int p = group.size(), me = group.rank();
  std::vector<std::vector<std::int64_t>> wanted = need.rows;
  wanted[me].clear();
  RowRequests req = exchange_requests(group, wanted);
  RowExchange e;
  e.send_counts = std::move(req.counts);
  e.send_rows = std::move(req.rows);
  e.recv_counts.assign(p, 0);
  e.recv_displs.assign(p, 0);
  e.send_displs.assign(p, 0);
  for (int j = 0; j < p; ++j) e.recv_counts[j] = static_cast<std::int64_t>(wanted[j].size());
  for (int j = 1; j < p; ++j) {
    e.recv_displs[j] = e.recv_displs[j - 1] + e.recv_counts[j - 1];
    e.send_displs[j] = e.send_displs[j - 1] + e.send_counts[j - 1];
  }
  return e;
}

}  // namespace gcnlab

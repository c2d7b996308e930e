#include "common/dist/needed_rows.hpp"

#include <algorithm>

namespace gcnlab {

NeededRows needed_rows(const HostCsr& a, const std::vector<std::int64_t>& offsets) {
  const int blocks = static_cast<int>(offsets.size()) - 1;
  NeededRows out;
  out.rows.resize(blocks);
  // distinct nonzero columns, sorted, split by owner block
  std::vector<std::int64_t> cols(a.col.begin(), a.col.end());
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
  int j = 0;
  for (std::int64_t c : cols) {
    while (offsets[j + 1] <= c) ++j;
    out.rows[j].push_back(c - offsets[j]);
  }
  // remap: block j's column c -> index of (c - offsets[j]) in rows[j]
  out.compact.resize(blocks);
  for (int b = 0; b < blocks; ++b) {
    HostCsr& m = out.compact[b];
    m.rows = a.rows;
    m.cols = static_cast<std::int64_t>(out.rows[b].size());
    m.rowptr.assign(a.rows + 1, 0);
  }
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (std::int64_t k = a.rowptr[r]; k < a.rowptr[r + 1]; ++k) {
      const std::int64_t c = a.col[k];
      const int b = static_cast<int>(std::upper_bound(offsets.begin(), offsets.end(), c) - offsets.begin()) - 1;
      const auto& need = out.rows[b];
      HostCsr& m = out.compact[b];
      m.col.push_back(std::lower_bound(need.begin(), need.end(), c - offsets[b]) - need.begin());
      m.val.push_back(a.val[k]);
    }
    for (int b = 0; b < blocks; ++b) out.compact[b].rowptr[r + 1] = static_cast<std::int64_t>(out.compact[b].col.size());
  }
  return out;
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

HostCsr concat_compact(const NeededRows& n, int skip) {
  const int blocks = static_cast<int>(n.compact.size());
  HostCsr m;
  m.rows = blocks ? n.compact[0].rows : 0;
  std::vector<std::int64_t> shift(blocks, 0);
  for (int b = 0; b < blocks; ++b) {
    shift[b] = m.cols;
    if (b != skip) m.cols += n.compact[b].cols;
  }
  m.rowptr.assign(m.rows + 1, 0);
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (int b = 0; b < blocks; ++b) {
      if (b == skip) continue;
      const HostCsr& c = n.compact[b];
      for (std::int64_t k = c.rowptr[r]; k < c.rowptr[r + 1]; ++k) {
        m.col.push_back(c.col[k] + shift[b]);
        m.val.push_back(c.val[k]);
      }
    }
    m.rowptr[r + 1] = static_cast<std::int64_t>(m.col.size());
  }
  return m;
}

}  // namespace gcnlab

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

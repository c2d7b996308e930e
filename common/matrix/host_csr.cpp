#include "common/matrix/host_csr.hpp"

#include <algorithm>

#include "common/core/error.hpp"

namespace gcnlab {

HostCsr csr_from_coo(std::int64_t rows, std::int64_t cols, std::vector<Coo> entries,
                     bool sum_duplicates) {
  std::sort(entries.begin(), entries.end(), [](const Coo& a, const Coo& b) {
    return a.row != b.row ? a.row < b.row : a.col < b.col;
  });
  HostCsr m;
  m.rows = rows;
  m.cols = cols;
  m.rowptr.assign(rows + 1, 0);
  m.col.reserve(entries.size());
  m.val.reserve(entries.size());
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const Coo& e = entries[k];
    GCNLAB_ASSERT(e.row >= 0 && e.row < rows && e.col >= 0 && e.col < cols);
    if (k > 0 && e.row == entries[k - 1].row && e.col == entries[k - 1].col) {
      if (sum_duplicates) m.val.back() += e.val;
      continue;
    }
    m.col.push_back(e.col);
    m.val.push_back(e.val);
    ++m.rowptr[e.row + 1];
  }
  for (std::int64_t i = 0; i < rows; ++i) m.rowptr[i + 1] += m.rowptr[i];
  return m;
}

HostCsr csr_from_edge_passes(std::int64_t n, const EdgePass& pass, bool symmetrize) {
  HostCsr m;
  m.rows = m.cols = n;
  m.rowptr.assign(n + 1, 0);
  std::int64_t* count = m.rowptr.data() + 1;
  pass([&](std::int64_t u, std::int64_t v) {
    GCNLAB_ASSERT(u >= 0 && u < n && v >= 0 && v < n);
    if (u == v) return;
#pragma omp atomic
    ++count[u];
    if (symmetrize) {
#pragma omp atomic
      ++count[v];
    }
  });
  for (std::int64_t i = 0; i < n; ++i) m.rowptr[i + 1] += m.rowptr[i];
  m.col.reserve(m.rowptr[n] + n);
  m.col.resize(m.rowptr[n]);
  std::vector<std::int64_t> next(m.rowptr.begin(), m.rowptr.end() - 1);
  std::int64_t* col = m.col.data();
  auto place = [&](std::int64_t row, std::int64_t c) {
    std::int64_t at;
#pragma omp atomic capture
    at = next[row]++;
    if (at < m.rowptr[row + 1]) col[at] = c;  // a source that gives more this time is caught below
  };
  pass([&](std::int64_t u, std::int64_t v) {
    if (u == v) return;
    place(u, v);
    if (symmetrize) place(v, u);
  });
  for (std::int64_t i = 0; i < n; ++i)
    GCNLAB_CHECK(next[i] == m.rowptr[i + 1], "an edge source gave different edges on its second pass");
  std::vector<std::int64_t>().swap(next);
  compact_rows(m, n);
  return m;
}

void compact_rows(HostCsr& m, std::int64_t room) {
  // sort each row, drop duplicates, compact in place (the fill order of concurrent passes does not matter)
  std::int64_t out = 0;
  for (std::int64_t i = 0; i < m.rows; ++i) {
    const auto first = m.col.begin() + m.rowptr[i], last = m.col.begin() + m.rowptr[i + 1];
    std::sort(first, last);
    const auto end = std::unique(first, last);
    m.rowptr[i] = out;
    out = std::copy(first, end, m.col.begin() + out) - m.col.begin();
  }
  m.rowptr[m.rows] = out;
  m.col.resize(out);
  // many duplicates (R-MAT draws): give the spare room back, keeping `room`
  if (static_cast<std::int64_t>(m.col.capacity()) > out + room + out / 8) {
    std::vector<std::int64_t> fit;
    fit.reserve(out + room);
    fit.assign(m.col.begin(), m.col.end());
    m.col.swap(fit);
  }
  m.val.reserve(out + room);
  m.val.assign(out, 1.f);
}

HostCsr csr_from_edges(std::int64_t n, const std::vector<std::array<std::int64_t, 2>>& edges, bool symmetrize) {
  return csr_from_edge_passes(
      n,
      [&](const EdgeEmit& emit) {
        for (const auto& [u, v] : edges) emit(u, v);
      },
      symmetrize);
}

HostCsr csr_from_edges(std::int64_t n, std::span<const std::int64_t> src, std::span<const std::int64_t> dst,
                       bool symmetrize) {
  GCNLAB_ASSERT(src.size() == dst.size());
  return csr_from_edge_passes(
      n,
      [&](const EdgeEmit& emit) {
        for (std::size_t k = 0; k < src.size(); ++k) emit(src[k], dst[k]);
      },
      symmetrize);
}

HostCsr copy_with_room(const HostCsr& a, std::int64_t extra) {
  HostCsr c;
  c.rows = a.rows;
  c.cols = a.cols;
  c.rowptr = a.rowptr;
  c.col.reserve(a.col.size() + extra);
  c.col.assign(a.col.begin(), a.col.end());
  c.val.reserve(a.val.size() + extra);
  c.val.assign(a.val.begin(), a.val.end());
  return c;
}

HostCsr transpose(const HostCsr& a) {
  HostCsr t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.rowptr.assign(a.cols + 1, 0);
  for (std::int64_t c : a.col) ++t.rowptr[c + 1];
  for (std::int64_t i = 0; i < t.rows; ++i) t.rowptr[i + 1] += t.rowptr[i];
  t.col.resize(a.nnz());
  t.val.resize(a.nnz());
  std::vector<std::int64_t> next(t.rowptr.begin(), t.rowptr.end() - 1);
  for (std::int64_t i = 0; i < a.rows; ++i)  // rows in order => transposed columns sorted
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k) {
      const std::int64_t dst = next[a.col[k]]++;
      t.col[dst] = i;
      t.val[dst] = a.val[k];
    }
  return t;
}

HostCsr extract_block(const HostCsr& a, std::int64_t r0, std::int64_t r1, std::int64_t c0,
                      std::int64_t c1) {
  GCNLAB_ASSERT(0 <= r0 && r0 <= r1 && r1 <= a.rows && 0 <= c0 && c0 <= c1 && c1 <= a.cols);
  HostCsr b;
  b.rows = r1 - r0;
  b.cols = c1 - c0;
  b.rowptr.assign(b.rows + 1, 0);
  for (std::int64_t i = r0; i < r1; ++i) {
    // columns are sorted: binary search the range
    const auto first = a.col.begin() + a.rowptr[i], last = a.col.begin() + a.rowptr[i + 1];
    const auto lo = std::lower_bound(first, last, c0), hi = std::lower_bound(first, last, c1);
    for (auto it = lo; it != hi; ++it) {
      b.col.push_back(*it - c0);
      b.val.push_back(a.val[it - a.col.begin()]);
    }
    b.rowptr[i - r0 + 1] = static_cast<std::int64_t>(b.col.size());
  }
  return b;
}

HostCsr extract_rows(const HostCsr& a, std::int64_t r0, std::int64_t r1) {
  return extract_block(a, r0, r1, 0, a.cols);
}

HostCsr extract_submatrix(const HostCsr& a, const std::vector<std::int64_t>& rows,
                          const std::vector<std::int64_t>& col_map, std::int64_t cols) {
  GCNLAB_ASSERT(static_cast<std::int64_t>(col_map.size()) == a.cols);
  HostCsr out;
  out.rows = static_cast<std::int64_t>(rows.size());
  out.cols = cols;
  out.rowptr.reserve(rows.size() + 1);
  std::vector<std::pair<std::int64_t, float>> row;
  for (std::int64_t r : rows) {
    row.clear();
    for (std::int64_t k = a.rowptr[r]; k < a.rowptr[r + 1]; ++k)
      if (const std::int64_t c = col_map[a.col[k]]; c >= 0) row.emplace_back(c, a.val[k]);
    std::sort(row.begin(), row.end());
    for (const auto& [c, v] : row) out.col.push_back(c), out.val.push_back(v);
    out.rowptr.push_back(static_cast<std::int64_t>(out.col.size()));
  }
  return out;
}

bool structurally_symmetric(const HostCsr& a) {
  if (a.rows != a.cols) return false;
  const HostCsr t = transpose(a);
  return t.rowptr == a.rowptr && t.col == a.col;
}

HostCsr union_rows(const HostCsr& a, const HostCsr& b, std::int64_t first) {
  GCNLAB_ASSERT(a.rows == b.rows);
  HostCsr s;
  s.rows = a.rows;
  s.cols = std::max(a.cols, b.cols);
  s.rowptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
  std::vector<std::int64_t> cols;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    cols.assign(a.col.begin() + a.rowptr[i], a.col.begin() + a.rowptr[i + 1]);
    cols.insert(cols.end(), b.col.begin() + b.rowptr[i], b.col.begin() + b.rowptr[i + 1]);
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (const std::int64_t c : cols)
      if (c != first + i) s.col.push_back(c);
    s.rowptr[i + 1] = static_cast<std::int64_t>(s.col.size());
  }
  s.val.assign(s.col.size(), 1.f);
  return s;
}

}  // namespace gcnlab

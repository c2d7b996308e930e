#include "common/data/graph.hpp"

#include <algorithm>
#include <cmath>

#include "common/core/error.hpp"

namespace gcnlab {

Graph normalized_graph(const Dataset& d) {
  const HostCsr& a = d.adj;
  const std::int64_t n = a.rows;
  // A + I: insert the diagonal entry into each (sorted) row.
  auto m = std::make_shared<HostCsr>();
  m->rows = m->cols = n;
  m->rowptr.assign(n + 1, 0);
  m->col.reserve(a.nnz() + n);
  m->val.reserve(a.nnz() + n);
  std::vector<double> inv_sqrt_deg(n);
  for (std::int64_t i = 0; i < n; ++i) {
    bool placed = false;
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k) {
      if (!placed && a.col[k] > i) {
        m->col.push_back(i), m->val.push_back(1.f), placed = true;
      }
      m->col.push_back(a.col[k]), m->val.push_back(1.f);
    }
    if (!placed) m->col.push_back(i), m->val.push_back(1.f);
    m->rowptr[i + 1] = static_cast<std::int64_t>(m->col.size());
    inv_sqrt_deg[i] = 1.0 / std::sqrt(static_cast<double>(m->rowptr[i + 1] - m->rowptr[i]));
  }
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = m->rowptr[i]; k < m->rowptr[i + 1]; ++k)
      m->val[k] = static_cast<float>(inv_sqrt_deg[i] * inv_sqrt_deg[m->col[k]]);

  Graph g;
  g.n = n;
  g.order.resize(n);
  for (std::int64_t v = 0; v < n; ++v) g.order[v] = v;
  g.directed = d.directed;
  g.a_hat = m;
  g.a_hat_t = d.directed ? std::make_shared<const HostCsr>(transpose(*m)) : g.a_hat;
  return g;
}

namespace {

HostCsr permute_matrix(const HostCsr& a, const std::vector<std::int64_t>& order,
                       const std::vector<std::int64_t>& position) {
  HostCsr b;
  b.rows = a.rows;
  b.cols = a.cols;
  b.rowptr.assign(a.rows + 1, 0);
  b.col.reserve(a.nnz());
  b.val.reserve(a.nnz());
  std::vector<std::pair<std::int64_t, float>> row;
  for (std::int64_t p = 0; p < a.rows; ++p) {
    const std::int64_t v = order[p];
    row.clear();
    for (std::int64_t k = a.rowptr[v]; k < a.rowptr[v + 1]; ++k) row.emplace_back(position[a.col[k]], a.val[k]);
    std::sort(row.begin(), row.end());
    for (const auto& [c, x] : row) b.col.push_back(c), b.val.push_back(x);
    b.rowptr[p + 1] = static_cast<std::int64_t>(b.col.size());
  }
  return b;
}

}  // namespace

Graph permute(const Graph& g, const std::vector<std::int64_t>& order) {
  GCNLAB_ASSERT(static_cast<std::int64_t>(order.size()) == g.n);
  std::vector<std::int64_t> position(g.n, -1);
  for (std::int64_t p = 0; p < g.n; ++p) {
    GCNLAB_ASSERT(order[p] >= 0 && order[p] < g.n && position[order[p]] == -1);
    position[order[p]] = p;
  }
  Graph out;
  out.n = g.n;
  out.directed = g.directed;
  out.order.resize(g.n);
  for (std::int64_t p = 0; p < g.n; ++p) out.order[p] = g.order[order[p]];
  out.a_hat = std::make_shared<const HostCsr>(permute_matrix(*g.a_hat, order, position));
  out.a_hat_t = g.directed ? std::make_shared<const HostCsr>(permute_matrix(*g.a_hat_t, order, position)) : out.a_hat;
  return out;
}

}  // namespace gcnlab

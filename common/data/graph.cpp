#include "common/data/graph.hpp"

#include <cmath>

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
  g.directed = d.directed;
  g.a_hat = m;
  g.a_hat_t = d.directed ? std::make_shared<const HostCsr>(transpose(*m)) : g.a_hat;
  return g;
}

}  // namespace gcnlab

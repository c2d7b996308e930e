#include "common/data/graph.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/core/blocks.hpp"
#include "common/core/error.hpp"

namespace gcnlab {

void add_self_loops(HostCsr& a, std::int64_t first) {
  const std::int64_t rows = a.rows, nnz = a.nnz();
  GCNLAB_ASSERT(static_cast<std::int64_t>(a.rowptr.size()) == rows + 1 && 0 <= first && first + rows <= a.cols);
  // Row i moves right by i (by i + 1 after its diagonal), so walking rows and
  // entries from the back never overwrites an unread entry.
  a.col.resize(nnz + rows);
  a.val.resize(nnz + rows);
  for (std::int64_t i = rows - 1; i >= 0; --i) {
    const std::int64_t diagonal = first + i;
    std::int64_t to = a.rowptr[i + 1] + i;  // last slot of the new row i
    bool placed = false;
    for (std::int64_t k = a.rowptr[i + 1] - 1; k >= a.rowptr[i]; --k) {
      if (!placed && a.col[k] < diagonal) a.col[to--] = diagonal, placed = true;
      a.col[to--] = a.col[k];
    }
    if (!placed) a.col[to--] = diagonal;
    GCNLAB_ASSERT(to == a.rowptr[i] + i - 1);
    a.rowptr[i + 1] += i + 1;
  }
}

NormalizedAdjacency normalized_graph(HostCsr a, bool directed) {
  const std::int64_t n = a.rows;
  GCNLAB_ASSERT(a.cols == n && static_cast<std::int64_t>(a.rowptr.size()) == n + 1);
  add_self_loops(a, 0);  // A + I in place
  // Â = D^-1/2 (A + I) D^-1/2, D the row lengths of A + I
  std::vector<double> inv_sqrt_deg(n);
  for (std::int64_t i = 0; i < n; ++i)
    inv_sqrt_deg[i] = 1.0 / std::sqrt(static_cast<double>(a.rowptr[i + 1] - a.rowptr[i]));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k)
      a.val[k] = static_cast<float>(inv_sqrt_deg[i] * inv_sqrt_deg[a.col[k]]);

  NormalizedAdjacency g;
  g.n = n;
  g.directed = directed;
  auto m = std::make_shared<const HostCsr>(std::move(a));
  g.a_hat = m;
  g.a_hat_t = directed ? std::make_shared<const HostCsr>(transpose(*m)) : m;
  return g;
}

NormalizedAdjacency normalized_graph(const Dataset& d) {
  return normalized_graph(copy_with_room(d.adj, d.adj.rows), d.directed);
}

std::vector<std::int64_t> Graph::vertices(int id, std::int64_t q0, std::int64_t q1) const {
  GCNLAB_ASSERT(id >= 0 && id < layout_.orderings && 0 <= q0 && q0 <= q1 && q1 <= n_);
  return read_vertices(id, q0, q1);
}

HostCsr Graph::block(Direction d, int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0,
                     std::int64_t c1) const {
  GCNLAB_ASSERT(0 <= r0 && r0 <= r1 && r1 <= n_ && 0 <= c0 && c0 <= c1 && c1 <= n_);
  check_version(d, r, c);
  return d == Direction::forward ? read_block_t(r, r0, r1, c, c0, c1) : read_block(r, r0, r1, c, c0, c1);
}

void Graph::check_version(Direction d, int r, int c) const {
  // Â's (r, c) block is the transpose of Âᵀ's (c, r) block.
  const std::array<int, 2> version = d == Direction::forward ? std::array<int, 2>{r, c} : std::array<int, 2>{c, r};
  const auto& v = layout_.versions;
  GCNLAB_CHECK(std::find(v.begin(), v.end(), version) != v.end(),
               "the graph holds no adjacency with rows in ordering {} and columns in ordering {} (prepared with "
               "--permutation {}; prepare it with the permutation this strategy uses)",
               version[0], version[1], layout_.permutation);
}

void Graph::column_blocks(Direction d, std::int64_t r0, std::int64_t r1, std::span<const ColumnRange> columns,
                          const BlockSink& sink) const {
  GCNLAB_ASSERT(0 <= r0 && r0 <= r1 && r1 <= n_);
  for (std::size_t k = 0; k < columns.size(); ++k)
    GCNLAB_ASSERT(columns[k].first <= columns[k].second && columns[k].second <= n_ &&
                  (k == 0 ? columns[k].first >= 0 : columns[k].first >= columns[k - 1].second));
  check_version(d, 0, 0);
  read_column_blocks(d, r0, r1, columns, sink);
}

void Graph::read_column_blocks(Direction d, std::int64_t r0, std::int64_t r1, std::span<const ColumnRange> columns,
                               const BlockSink& sink) const {
  for (const auto& [c0, c1] : columns) sink(block(d, r0, r1, c0, c1));
}

std::vector<std::int64_t> Graph::in_degrees(int id, std::int64_t q0, std::int64_t q1) const {
  GCNLAB_ASSERT(id >= 0 && id < layout_.orderings && 0 <= q0 && q0 <= q1 && q1 <= n_);
  return read_in_degrees(id, q0, q1);
}

std::vector<std::int64_t> Graph::read_in_degrees(int id, std::int64_t q0, std::int64_t q1) const {
  // Any stored version with rows in ordering `id`; every row of A + I holds its diagonal.
  const auto& v = layout_.versions;
  const auto it = std::find_if(v.begin(), v.end(), [&](const std::array<int, 2>& rc) { return rc[0] == id; });
  GCNLAB_CHECK(it != v.end(), "the graph holds no adjacency with rows in ordering {}", id);
  const HostCsr stripe = read_block_t(id, q0, q1, (*it)[1], 0, n_);
  std::vector<std::int64_t> deg(static_cast<std::size_t>(q1 - q0));
  for (std::int64_t i = 0; i < q1 - q0; ++i) deg[i] = stripe.rowptr[i + 1] - stripe.rowptr[i] - 1;
  return deg;
}

HostCsr Graph::read_block(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const {
  return symmetric_ ? read_block_t(r, r0, r1, c, c0, c1) : transpose(read_block_t(c, c0, c1, r, r0, r1));
}

InMemoryGraph::InMemoryGraph(NormalizedAdjacency adj, GraphLayout layout, std::vector<std::vector<std::int64_t>> orderings)
    : Graph(adj.n, adj.directed, std::move(layout)), adj_(std::move(adj)), orderings_(std::move(orderings)) {
  GCNLAB_ASSERT(static_cast<int>(orderings_.size()) == this->layout().orderings);
  for (const auto& order : orderings_) {
    GCNLAB_ASSERT(static_cast<std::int64_t>(order.size()) == n());
    std::vector<char> seen(order.size(), 0);
    for (std::int64_t v : order) {
      GCNLAB_ASSERT(v >= 0 && v < n() && !seen[v]);
      seen[v] = 1;
    }
  }
}

std::vector<std::int64_t> InMemoryGraph::read_vertices(int id, std::int64_t q0, std::int64_t q1) const {
  return {orderings_[id].begin() + q0, orderings_[id].begin() + q1};
}

HostCsr InMemoryGraph::extract(const HostCsr& a, int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0,
                               std::int64_t c1) const {
  std::vector<std::int64_t> col_map(static_cast<std::size_t>(n()), -1);
  for (std::int64_t q = c0; q < c1; ++q) col_map[orderings_[c][q]] = q - c0;
  return extract_submatrix(a, read_vertices(r, r0, r1), col_map, c1 - c0);
}

HostCsr InMemoryGraph::read_block_t(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0,
                                    std::int64_t c1) const {
  return extract(*adj_.a_hat_t, r, r0, r1, c, c0, c1);
}

HostCsr InMemoryGraph::read_block(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0,
                                  std::int64_t c1) const {
  return extract(*adj_.a_hat, r, r0, r1, c, c0, c1);
}

std::vector<std::int64_t> InMemoryGraph::read_in_degrees(int id, std::int64_t q0, std::int64_t q1) const {
  const HostCsr& t = *adj_.a_hat_t;
  std::vector<std::int64_t> deg;
  deg.reserve(static_cast<std::size_t>(q1 - q0));
  for (std::int64_t q = q0; q < q1; ++q) {
    const std::int64_t v = orderings_[id][q];
    deg.push_back(t.rowptr[v + 1] - t.rowptr[v] - 1);
  }
  return deg;
}

std::vector<std::int64_t> row_blocks(const Graph& g, int k) {
  const GraphLayout& layout = g.layout();
  if (layout.parts == 0) return block_offsets(g.n(), k);
  GCNLAB_CHECK(layout.parts == k,
               "the graph was partitioned into {} parts (--partitioner {}) but this strategy cuts {} block rows; "
               "prepare it with --parts {}",
               layout.parts, layout.partitioner, k, k);
  return layout.blocks;
}

}  // namespace gcnlab

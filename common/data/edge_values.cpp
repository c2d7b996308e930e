#include "common/data/edge_values.hpp"

#include "common/core/error.hpp"

namespace gcnlab {

std::string to_string(EdgeValues v) {
  switch (v) {
    case EdgeValues::gcn: return "gcn";
    case EdgeValues::mean: return "mean";
    case EdgeValues::sum: return "sum";
  }
  return "?";
}

bool symmetric_values(EdgeValues v) { return v != EdgeValues::mean; }

ValuedGraph::ValuedGraph(const Graph& base, EdgeValues values)
    : Graph(base.n(), base.directed(), base.layout(), base.symmetric() && symmetric_values(values)),
      base_(base),
      values_(values) {}

std::vector<std::int64_t> ValuedGraph::read_vertices(int id, std::int64_t q0, std::int64_t q1) const {
  return base_.vertices(id, q0, q1);
}

std::vector<std::int64_t> ValuedGraph::read_in_degrees(int id, std::int64_t q0, std::int64_t q1) const {
  return base_.in_degrees(id, q0, q1);
}

HostCsr ValuedGraph::read_block_t(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0,
                                  std::int64_t c1) const {
  return revalue(base_.block(Direction::forward, r, r0, r1, c, c0, c1), Direction::forward, r, r0, c, c0, c1);
}

HostCsr ValuedGraph::read_block(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0,
                                std::int64_t c1) const {
  return revalue(base_.block(Direction::backward, r, r0, r1, c, c0, c1), Direction::backward, r, r0, c, c0, c1);
}

void ValuedGraph::read_column_blocks(Direction d, std::int64_t r0, std::int64_t r1,
                                     std::span<const ColumnRange> columns, const BlockSink& sink) const {
  std::size_t k = 0;  // the base calls the sink once per range, left to right
  base_.column_blocks(d, r0, r1, columns, [&](HostCsr b) {
    const auto [c0, c1] = columns[k++];
    sink(revalue(std::move(b), d, 0, r0, 0, c0, c1));
  });
}

HostCsr ValuedGraph::revalue(HostCsr b, Direction d, int r, std::int64_t r0, int c, std::int64_t c0,
                             std::int64_t c1) const {
  if (values_ == EdgeValues::gcn) return b;
  const std::int64_t r1 = r0 + b.rows;
  // The diagonal: the same vertex in both orderings (positions when they are one ordering).
  std::vector<std::int64_t> row_ids, col_ids;
  if (r != c) row_ids = base_.vertices(r, r0, r1), col_ids = base_.vertices(c, c0, c1);
  auto diagonal = [&](std::int64_t i, std::int64_t j) {
    return r == c ? r0 + i == c0 + j : row_ids[static_cast<std::size_t>(i)] == col_ids[static_cast<std::size_t>(j)];
  };
  // mean: the target's in-degree (forward: the row's vertex; backward: the column's).
  std::vector<std::int64_t> degree;
  if (values_ == EdgeValues::mean)
    degree = d == Direction::forward ? base_.in_degrees(r, r0, r1) : base_.in_degrees(c, c0, c1);
  for (std::int64_t i = 0; i < b.rows; ++i)
    for (std::int64_t k = b.rowptr[i]; k < b.rowptr[i + 1]; ++k) {
      const std::int64_t j = b.col[k];
      if (diagonal(i, j)) {
        b.val[k] = 0.f;
      } else if (values_ == EdgeValues::sum) {
        b.val[k] = 1.f;
      } else {
        const std::int64_t target_degree = degree[static_cast<std::size_t>(d == Direction::forward ? i : j)];
        GCNLAB_ASSERT(target_degree >= 1);
        b.val[k] = static_cast<float>(1.0 / static_cast<double>(target_degree));
      }
    }
  return b;
}

}  // namespace gcnlab

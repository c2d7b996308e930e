#pragma once
// The values a model aggregates with, on the pattern every prepared graph
// stores: A + I (Âᵀ's rows are targets i, its columns sources j, j -> i an
// edge of A; graph.hpp). One prepared directory serves every model: a value
// set is formed when a strategy reads its blocks, from the stored pattern and
// the targets' in-degrees d_i (Graph::in_degrees).
//
//   gcn   Â = D^-1/2 (A + I) D^-1/2, as stored (Kipf & Welling Eq. 2)
//   mean  1 / d_i on each edge j -> i, 0 on the diagonal: the mean over the
//         in-neighbours, 0 for a vertex without any (PyG SAGEConv's aggr="mean")
//   sum   1 on each edge, 0 on the diagonal (GINConv's Σ_{j ∈ N(i)} h_j)
//
// mean and sum keep the diagonal as an explicit zero, so that every value set
// has the same pattern: one partition, one set of blocks, one communication
// plan (and byte model) for every model. The forward block's value of an edge
// depends on its row (its target) only, the backward block's on its column.
// mean is not symmetric even on an undirected graph: Âᵀ ≠ Â, and a strategy
// keeps both directions' blocks (Graph::symmetric).

#include <string>
#include <vector>

#include "common/data/graph.hpp"

namespace gcnlab {

enum class EdgeValues { gcn, mean, sum };

std::string to_string(EdgeValues v);
// Whether the values of an undirected graph are symmetric (Â = Âᵀ).
bool symmetric_values(EdgeValues v);

// A prepared graph read with another value set: its blocks are the base's
// pattern with the values of `values`; everything else is the base's. The
// base outlives it.
class ValuedGraph final : public Graph {
 public:
  ValuedGraph(const Graph& base, EdgeValues values);
  EdgeValues values() const { return values_; }

 protected:
  std::vector<std::int64_t> read_vertices(int id, std::int64_t q0, std::int64_t q1) const override;
  HostCsr read_block_t(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const override;
  HostCsr read_block(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const override;
  void read_column_blocks(Direction d, std::int64_t r0, std::int64_t r1, std::span<const ColumnRange> columns,
                          const BlockSink& sink) const override;
  std::vector<std::int64_t> read_in_degrees(int id, std::int64_t q0, std::int64_t q1) const override;

 private:
  // b's values for rows [r0, r1) of ordering r x columns [c0, c1) of ordering c, read in direction d.
  HostCsr revalue(HostCsr b, Direction d, int r, std::int64_t r0, int c, std::int64_t c0, std::int64_t c1) const;

  const Graph& base_;
  EdgeValues values_;
};

}  // namespace gcnlab

#pragma once
// The normalised adjacency every strategy distributes (docs/design.md "The model"):
//   Â = D^-1/2 (A + I) D^-1/2,  D = diag(row sums of A + I),
// self-loops added once (A carries none). A GCN layer computes Z = Âᵀ H W
// (CAGNET's notation), so the forward pass multiplies by Âᵀ and the backward
// pass by Â. For undirected graphs Â = Âᵀ and only one copy is kept.
//
// Strategies never hold the whole matrix: they ask a Graph for the blocks and
// vertex ids they own. A Graph is *prepared*: its vertices are laid out in one
// or more orderings (ordering 0 from a partitioner; Plexus's permutations add
// a second, Sec. 5.1), and Âᵀ is available in the (row ordering, column
// ordering) versions the preparation made. Two sources implement it:
//   InMemoryGraph  the whole Â in this process (in-memory dataset specs; what
//                  `gcnlab prepare` writes out)
//   ShardStore     a prepared directory (common/data/shards.hpp): each rank
//                  reads only the shards its blocks overlap
// so every strategy runs the same code on both. Both store Â's values; a
// model that aggregates with other values on the same pattern A + I (a mean
// or a sum over the in-neighbours) reads them through a ValuedGraph
// (common/data/edge_values.hpp), which forms them from the in-degrees.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/data/dataset.hpp"
#include "common/matrix/host_csr.hpp"

namespace gcnlab {

enum class Direction { forward, backward };  // Âᵀ (forward pass), Â (backward pass)

// How a prepared graph's vertices are laid out.
struct GraphLayout {
  std::string partitioner = "block";  // the method (or file) that made ordering 0
  int parts = 0;                      // parts of that partition (0: none, equal blocks at any count)
  // Block rows of the partition in ordering-0 positions: part k = [blocks[k], blocks[k+1]) (empty when parts = 0).
  std::vector<std::int64_t> blocks;
  std::string permutation = "none";  // Plexus Sec. 5.1: none | single | double (adds ordering 1)
  std::uint64_t seed = 1;            // of the partition and the permutation
  int orderings = 1;
  std::vector<std::array<int, 2>> versions{{0, 0}};  // (row ordering, column ordering) of each Âᵀ version
};

class Graph {
 public:
  virtual ~Graph() = default;
  std::int64_t n() const { return n_; }
  bool directed() const { return directed_; }
  // Â = Âᵀ: a strategy keeps one copy of its blocks for both directions. True
  // for undirected graphs with symmetric values (not for a mean aggregator's).
  bool symmetric() const { return symmetric_; }
  const GraphLayout& layout() const { return layout_; }

  // Original vertex ids of positions [q0, q1) of ordering `id`.
  std::vector<std::int64_t> vertices(int id, std::int64_t q0, std::int64_t q1) const;
  std::vector<std::int64_t> vertices(std::int64_t q0, std::int64_t q1) const { return vertices(0, q0, q1); }

  // Rows [r0, r1) of ordering r x columns [c0, c1) of ordering c of Âᵀ
  // (forward) or Â (backward), with local row and column indices.
  HostCsr block(Direction d, int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const;
  // The same in ordering 0 (every strategy but plexus-3d).
  HostCsr block(Direction d, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) const {
    return block(d, 0, r0, r1, 0, c0, c1);
  }
  // Rows [r0, r1) of ordering 0 x each of the column ranges [c0, c1) (ascending,
  // disjoint): each block goes to sink(block), left to right, so the caller holds
  // one block at a time and a source reads what neighbouring blocks share once.
  using ColumnRange = std::pair<std::int64_t, std::int64_t>;
  using BlockSink = std::function<void(HostCsr)>;
  void column_blocks(Direction d, std::int64_t r0, std::int64_t r1, std::span<const ColumnRange> columns,
                     const BlockSink& sink) const;

  // The in-degree in A (edges j -> i, j != i: the nonzeros of row i of Âᵀ but
  // its diagonal) of the vertices at positions [q0, q1) of ordering `id`.
  std::vector<std::int64_t> in_degrees(int id, std::int64_t q0, std::int64_t q1) const;

 protected:
  Graph(std::int64_t n, bool directed, GraphLayout layout, bool symmetric)
      : n_(n), directed_(directed), symmetric_(symmetric), layout_(std::move(layout)) {}
  Graph(std::int64_t n, bool directed, GraphLayout layout) : Graph(n, directed, std::move(layout), !directed) {}
  virtual std::vector<std::int64_t> read_vertices(int id, std::int64_t q0, std::int64_t q1) const = 0;
  // Only called with a stored version (r, c) of Âᵀ.
  virtual HostCsr read_block_t(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const = 0;
  // Â; the default transposes the stored Âᵀ version (c, r).
  virtual HostCsr read_block(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const;
  // The default reads one block() per range.
  virtual void read_column_blocks(Direction d, std::int64_t r0, std::int64_t r1, std::span<const ColumnRange> columns,
                                  const BlockSink& sink) const;
  // The default counts the row lengths of the forward row stripe [q0, q1) x all columns.
  virtual std::vector<std::int64_t> read_in_degrees(int id, std::int64_t q0, std::int64_t q1) const;

 private:
  void check_version(Direction d, int r, int c) const;

  std::int64_t n_;
  bool directed_, symmetric_;
  GraphLayout layout_;
};

// The k block rows a strategy cuts: the partition's parts when the graph was
// partitioned (it must have k), else equal blocks of ordering 0 (block_offsets).
std::vector<std::int64_t> row_blocks(const Graph& g, int k);

// Â and Âᵀ of a dataset in original vertex ids (the same object when undirected).
struct NormalizedAdjacency {
  std::int64_t n = 0;
  bool directed = false;
  std::shared_ptr<const HostCsr> a_hat;    // Â (backward)
  std::shared_ptr<const HostCsr> a_hat_t;  // Âᵀ (forward)
};
// Â built in A's own storage (no second copy when A's arrays have room for the
// n diagonal entries, as csr_from_edge_passes leaves them); the Dataset form copies d.adj.
NormalizedAdjacency normalized_graph(HostCsr a, bool directed);
NormalizedAdjacency normalized_graph(const Dataset& d);
// A + I's rows in place: `a` holds rows [first, first + a.rows) with sorted
// columns and no diagonal; each row gains its diagonal in order (values unset).
void add_self_loops(HostCsr& a, std::int64_t first);

// The whole graph in this process, laid out in the given orderings
// (orderings[id][q] = original id at position q).
class InMemoryGraph : public Graph {
 public:
  InMemoryGraph(NormalizedAdjacency adj, GraphLayout layout, std::vector<std::vector<std::int64_t>> orderings);
  const NormalizedAdjacency& adjacency() const { return adj_; }
  const std::vector<std::int64_t>& ordering(int id) const { return orderings_[id]; }

 protected:
  std::vector<std::int64_t> read_vertices(int id, std::int64_t q0, std::int64_t q1) const override;
  HostCsr read_block_t(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const override;
  HostCsr read_block(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const override;
  std::vector<std::int64_t> read_in_degrees(int id, std::int64_t q0, std::int64_t q1) const override;

 private:
  HostCsr extract(const HostCsr& a, int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0,
                  std::int64_t c1) const;
  NormalizedAdjacency adj_;
  std::vector<std::vector<std::int64_t>> orderings_;
};

}  // namespace gcnlab

#pragma once
// ScaleGNN's communication-free uniform vertex sampling (Wei et al. 2026,
// Sec. III-D, Alg. 1 and 2).
//
// Each training step draws B vertices uniformly without replacement (Eq. 20)
// from a seed that every rank of a data-parallel group shares, so every rank
// derives the same sample with no communication. The step trains on the
// induced subgraph (Eq. 21), whose off-diagonal weights are divided by the
// conditional inclusion probability p = (B - 1) / (N - 1) (Eq. 23-24; self-
// loops unchanged), which makes each sampled vertex's aggregation an unbiased
// estimate of its full-graph aggregation (Eq. 25). The same subgraph serves
// every layer; its transpose serves the backward pass.
//
// Vertices are sampled as *positions of ordering 0* of a prepared graph (the
// partitioner's ordering): a uniform sample of positions is a uniform sample
// of vertices, and every block of consecutive positions a rank owns holds a
// contiguous run of the sorted sample (Alg. 2 lines 4-5, one binary search).

#include <cstdint>
#include <span>
#include <vector>

#include "common/core/blocks.hpp"
#include "common/matrix/host_csr.hpp"

namespace gcnlab {

struct Sample {
  std::int64_t n = 0;                   // vertices of the full graph
  std::vector<std::int64_t> positions;  // the sample: sorted, distinct positions of ordering 0
  double inclusion = 1;                 // p = Pr[u in S | v in S] = (B - 1) / (N - 1), Eq. 23
  std::uint64_t seed = 0, step = 0;     // what drew it (uniform_sample)
  int group = 0;

  std::int64_t size() const { return static_cast<std::int64_t>(positions.size()); }
  // The sampled positions inside [full.first, full.end()), as a range of sample
  // indices (the block of the sample that the full graph's block holds).
  BlockRange restrict(BlockRange full) const;
};

// A sample cut out of a strategy's host blocks, ready to be installed
// (Strategy::cut, Strategy::restrict_to). Strategies derive from it to carry
// their induced blocks and layouts.
struct SampleCut {
  virtual ~SampleCut() = default;
  Sample sample;
};

// Alg. 2 line 1: B of the n positions, uniformly without replacement, sorted.
// A pure function of (seed, step, group): data-parallel group `group` of a
// 4D grid trains on its own sample (ScaleGNN Sec. IV-A). B = n gives every position.
Sample uniform_sample(std::int64_t n, std::int64_t b, std::uint64_t seed, std::uint64_t step, int group = 0);

// Alg. 2 lines 6-17 on one local block of Â or Âᵀ in ordering-0 positions:
// `a` holds global rows [row0, row0 + a.rows) x columns [col0, col0 + a.cols).
// Keeps the rows and columns of the sample (`rows`, `cols`: the sample's
// positions inside the block, ascending), renumbers them compactly, and
// divides every entry off the diagonal (global row != global column) by
// s.inclusion. The result is (rows.size()) x (cols.size()).
HostCsr induced_block(const HostCsr& a, std::int64_t row0, std::int64_t col0, std::span<const std::int64_t> rows,
                      std::span<const std::int64_t> cols, double inclusion);

// The matrix with `blocks` on its diagonal (rows and columns of each after the
// previous ones'): the D data-parallel groups' subgraphs as one graph.
HostCsr block_diagonal(std::span<const HostCsr> blocks);

// The sample's positions inside the full block [full.first, full.end()).
std::span<const std::int64_t> sampled_positions(const Sample& s, BlockRange full);

}  // namespace gcnlab

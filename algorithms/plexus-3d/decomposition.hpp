#pragma once
// The geometry of Plexus's 3D tensor-parallel GCN (Ranjan et al., SC'25,
// Sec. 3), free of any communicator: which block of every matrix a grid
// coordinate holds, the collectives of one epoch with their sizes, and the
// nonzeros of every adjacency shard. The strategy, its byte model, the
// load-balance report and the performance model (`gcnlab plan`) all read it,
// so they cannot disagree.
//
// Axes x, y, z = 0, 1, 2, grid G = Gx x Gy x Gz. Layer l uses the axes
// rotated l times (Sec. 3.2, Fig. 4): (a, b, c) = (x, y, z), (z, x, y),
// (y, z, x), (x, y, z), ...
//   input  F   n x f_l       rows over a, columns over b (replicated over c;
//                             layer 0: rows further split over c, Alg. 1 line 3)
//   shard  A   n x n         rows over c, columns over a (replicated over b)
//   H = A F    rows c, cols b, partial over a   -> all-reduce over a  (line 5)
//   W          f_l x f_{l+1} rows over b, cols over a, rows further split over c
//   Q = H W    rows c, cols a, partial over b   -> all-reduce over b  (line 9)
// so Q is layer l+1's input: rows over c = a', columns over a = b'. Layer 0's
// A shard lies on the ZX-plane, layer 1's on the YZ-plane, layer 2's on the
// XY-plane, and layer 3 reuses layer 0's (period 3).
//
// Permutations (Sec. 5.1). Rows of layer l's input are in ordering π_l of the
// vertices; layer l multiplies by A^(l) = Π_{l+1} Âᵀ Π_lᵀ. none: π_l = id;
// single (Eq. 5.1/5.2): π_l = P; double (Eq. 5.3/5.4): π_l = P_c for even l,
// P_r for odd l, so A^(l) alternates P_r Âᵀ P_cᵀ and P_c Âᵀ P_rᵀ. The
// distinct shards a rank stores: min(3, L) (none, single), min(6, L) (double).
//
// ScaleGNN's model (--model scalegnn, Sec. IV-C4) adds linear layers,
// parallelised as the GEMM of Eq. 28: input rows over c, columns over b; W
// rows over b, columns over a (rows further split over c); Z = X W partial
// over b -> all-reduce over b; so the rows keep their axis and the columns
// move to a. The input projection takes the features on the ZX-plane (rows
// over x, columns over z) and hands layer 1 its input on the XY-plane, where
// Plexus's layer 0 starts (Fig. 4); the convolutions then rotate as above.
// After each convolution: RMSNorm's row sums all-reduced over the columns'
// axis (a), dL/dγ over the rows' axis (c), and the residual resharded from
// the layer's input layout into its output layout (common/dist/reshard.hpp).
//
// GAT (--model gat; every layer an attention layer, Architecture::heads) keeps
// the feature columns of every matrix on one axis and splits the rows over the
// other two, so that the shard's rows and columns both index vertices while
// each head's features stay split the same way from Z = X W to the layer's
// output (algorithms/plexus-3d/attention.hpp):
//   input  X   n x f_l       rows over a, further split over c (R_{a,c}); columns over b
//   W          f_l x f_{l+1} rows over b, all columns (replicated over a and c)
//   Z = X W    rows R_{a,c}, columns over b: partial over b -> reduce-scatter over b
//   shard  A   rows over c (targets), columns over a (sources), replicated over b
//   out        rows over c, further split over a (R_{c,a}); columns over b
// so layer l+1 has (a', b', c') = (c, b, a): b = y on every layer, and the
// rows alternate between the x- and z-major splits (two shards per rank, the
// ZX-plane's block and its transposed position). No matrix is replicated.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/comm/ledger.hpp"
#include "common/core/blocks.hpp"
#include "common/data/sampling.hpp"
#include "common/dist/reshard.hpp"
#include "common/matrix/host_csr.hpp"
#include "common/model/architecture.hpp"
#include "partitioners/permutation.hpp"

namespace gcnlab::plexus {

inline constexpr const char* kAxisNames[3] = {"x", "y", "z"};

struct Axes {
  int a, b, c;
};
// Layer l's axes: (x, y, z) rotated l times.
constexpr Axes layer_axes(int l) {
  const int a = (3 - l % 3) % 3;
  return {a, (a + 1) % 3, (a + 2) % 3};
}

// The model as the decomposition sees it: widths f_0..f_L, each layer's kind
// (none given: all graph convolutions, Plexus's model) and whether a layer is
// followed by a norm block (ScaleGNN's RMSNorm and residual).
struct ModelShape {
  std::vector<std::int64_t> dims;
  std::vector<LayerKind> kinds;
  std::vector<bool> norms;
  bool self_term = false;  // Architecture::self_term: X_l is aligned with each layer's aggregate
  bool attention = false;  // every layer a graph-attention layer (GAT's geometry above)
  std::vector<std::int64_t> zdims;  // GAT: Z_l's width (Architecture::transformed; empty: dims[l+1])
  ModelShape(std::vector<std::int64_t> d) : dims(std::move(d)) {}  // NOLINT(google-explicit-constructor): Plexus's GCN
  explicit ModelShape(const Architecture& a)
      : dims(a.dims), kinds(a.kinds), norms(a.norm_after), self_term(a.self_term), attention(a.attends()),
        zdims(a.weight_cols()) {}
  int layers() const { return static_cast<int>(dims.size()) - 1; }
  // The heads layer l averages (Z_l is that many times its output wide, class-major).
  std::int64_t averaged(int l) const {
    return zdims.empty() ? 1 : zdims[static_cast<std::size_t>(l)] / dims[static_cast<std::size_t>(l + 1)];
  }
  LayerKind kind(int l) const { return kinds.empty() ? LayerKind::conv : kinds[static_cast<std::size_t>(l)]; }
  bool norm_after(int l) const { return !norms.empty() && norms[static_cast<std::size_t>(l)]; }
};

// Layer l's axes (layer_axes(l) when every layer is a convolution).
Axes axes_of(const ModelShape& m, int l);
// The axes over which activation matrix l (l = 0..L) has its rows and its columns.
struct MatrixAxes {
  int rows, cols;
  int minor = -1;  // the rows' blocks further split over this axis (GAT's matrices; -1: not)
};
MatrixAxes matrix_axes(const ModelShape& m, int l);

using Range = BlockRange;  // common/core/blocks.hpp: block_range(n, p, k)
// Elements of each of the p row blocks of a rows x width row-major matrix
// (the counts of an uneven all-gather or reduce-scatter of its row blocks).
std::vector<std::int64_t> row_block_elements(std::int64_t rows, int p, std::int64_t width);

// How the rows (vertices) of every matrix are cut into blocks: equal blocks of
// the n positions (the full graph), or, for a mini-batch, the sampled positions
// inside each of those blocks (ScaleGNN Alg. 2 lines 4-5), so that the rows a
// rank holds of a sample are a subset of the rows it holds of the full graph
// and its sampled adjacency block is cut out of its full one with no
// communication. For a sample, ranges are in sample indices.
class RowSplit {
 public:
  RowSplit(std::int64_t n) : n_(n) {}  // NOLINT(google-explicit-constructor): the full graph
  explicit RowSplit(const Sample& s) : n_(s.n), sample_(&s) {}
  std::int64_t n() const { return n_; }
  const Sample* sample() const { return sample_; }
  // Rows of the whole matrix: n, or the sample's size.
  std::int64_t rows() const;
  // Block k of p.
  Range block(int p, int k) const;
  // Block j of q inside block k of p (layer 0's input rows, split further over c).
  Range sub_block(int p, int k, int q, int j) const;
  // Elements of each of the q sub-blocks of block k of p at `width` columns
  // (the counts of layer 0's uneven all-gather over c).
  std::vector<std::int64_t> sub_block_elements(int p, int k, int q, std::int64_t width) const;

 private:
  Range restrict(Range full) const { return sample_ ? sample_->restrict(full) : full; }
  std::int64_t n_;
  const Sample* sample_ = nullptr;
};

using Grid = std::array<int, 3>;    // Gx, Gy, Gz
using Coords = std::array<int, 3>;  // x, y, z

// The blocks one coordinate holds in layer l (f_l -> f_{l+1}).
struct LayerBlocks {
  Axes ax;
  Range rows_in;   // rows of F (over a), in ordering l
  Range x_rows;    // rows of F this rank stores: rows_in, split over c on layer 0
  Range rows_out;  // rows of H and Q (over c), in ordering l + 1
  Range cols_in;   // columns of F and H, rows of W (over b)
  Range cols_out;  // columns of Q and W (over a; GAT: of Z and the output, over b)
  Range w_rows;    // rows of W this rank stores: cols_in split over c (GAT: cols_in)
  Range w_cols;    // columns of W this rank stores: cols_out (GAT: all of Z's, ModelShape::zdims)
};
LayerBlocks layer_blocks(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k, int l);

// The rows and columns of activation matrix l (l = 0..L) held by coordinate k.
struct InputBlock {
  Range rows, cols;
};
InputBlock input_block(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k, int l);

// The rank of coordinate k in the grid's communicator, and back (Y innermost,
// then X, then Z: Sec. 4.2).
int grid_rank(const Grid& g, const Coords& k);
Coords grid_coords(const Grid& g, int rank);

// The residual of a GNN layer moved from activation matrix `from`'s layout into `to`'s.
Reshard residual_reshard(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k, int from, int to);
// Layer l's input X_l moved into its aggregated layout (the rows of matrix
// l + 1, the columns of matrix l: Primitives::align), or back (backward).
Reshard align_reshard(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k, int l, bool backward);

// One collective of an epoch as one rank sees it.
struct Collective {
  Category category;
  int axis;           // the group: ranks that differ only in this coordinate (-1: the whole grid)
  int layer;
  bool backward;
  double wire_bytes;  // received by this rank (common/comm/wire.hpp)
  double payload_bytes;
};

// The collectives of one primitive of layer l (Plexus3DStrategy's byte
// companions; epoch_collectives runs them in a GCN epoch's order): the
// aggregation forward (Alg. 1 lines 3-5) and backward (Alg. 2 lines 7-8), the
// linear map (Alg. 1 lines 7-9; Eq. 28) and its backward without or with dX
// (Alg. 2 lines 2-3, 5-6), RMSNorm's row sums over Z_l's columns and dL/dγ's
// column sums over its rows (Eq. 29).
enum class Step { aggregate_forward, aggregate_backward, linear, linear_backward, linear_backward_dx, row_sums,
                  column_sums };
std::vector<Collective> step_collectives(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k,
                                         int l, Step step, double sum_element_bytes = 4);
// The residual's reshard after layer l (backward: its gradient, layout l+1 -> l).
Collective reshard_collective(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k, int l,
                              bool backward);

// Every collective of one training epoch (forward + backward; one step on a
// sample) for coordinate k, in program order, with ScaleGNN's RMSNorm and
// residual collectives (always fp32) where the model has them. `learn_features`: layer 0 also
// computes dL/dF. `sum_element_bytes`: the wire size of an element of the
// partial-sum all-reduces (4, or 2 with bf16 communication, ScaleGNN Sec. V-B;
// the all-gathers and reduce-scatters stay fp32). The performance model
// (planning/perf_model) prices this list; a run's byte model is the trainer's
// step traced through the step companions above, and tests check the two agree.
std::vector<Collective> epoch_collectives(const RowSplit& rows, const ModelShape& m, const Grid& g, const Coords& k,
                                          bool learn_features, double sum_element_bytes = 4);

// Nonzeros of every shard of Π_r A Π_cᵀ cut into R x C blocks (row-major
// R x C result): row q of the permuted matrix is A's row row_order[q].
std::vector<std::int64_t> shard_nnz(const HostCsr& a, const std::vector<std::int64_t>& row_order,
                                    const std::vector<std::int64_t>& col_order, int R, int C);

// max / mean of a list of counts (1 for an empty or all-zero list).
double max_over_mean(const std::vector<std::int64_t>& v);

// Load balance of the adjacency shards on an R x C cut, as Plexus's Table 3:
// the worst max/mean over the distinct adjacency versions a permutation stores.
double shard_imbalance(const HostCsr& a_t, Permutation p, std::uint64_t seed, int R, int C);

}  // namespace gcnlab::plexus

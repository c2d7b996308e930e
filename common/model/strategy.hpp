#pragma once
// Strategy: the distributed primitives of one parallel layout.
//
// The models (models/<name>/, written once against these primitives; the
// graph convolution in common/model/convolution) and the training loop
// (dropout, softmax cross-entropy, optimiser, init: common/model) know no
// strategy, and a strategy knows no model: it lays out the weight layers of an
// Architecture (common/model/architecture.hpp). A strategy only decides
//   - which rows (vertices) and columns of each activation matrix a rank holds,
//   - which block of each weight matrix it holds,
//   - how its primitives are computed from local kernels (Backend) and
//     collectives (Communicator):
//       aggregate       out = Âᵀ in (Direction::forward) or Â in (backward), any width
//       linear          Z = X W
//       linear_backward dW = Xᵀ G (reduced to the rank's complete block), dX = G Wᵀ
//   - and its analytic model of the bytes that moves.
// Layer l maps X_l (n x f_l) to Z_l (n x f_{l+1}); layout(L) is the logits'.
// Linear layers (Z = X W) run on every strategy's layouts. Where an
// architecture has norm blocks (ScaleGNN's model), the strategy also moves
// RMSNorm's row statistics and the residuals between its layouts
// (sum_over_columns, sum_over_rows, reshard).

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/backend/backend.hpp"
#include "common/comm/byte_model.hpp"
#include "common/comm/communicator.hpp"
#include "common/comm/ledger.hpp"
#include "common/data/graph.hpp"
#include "common/data/sampling.hpp"
#include "common/model/init.hpp"
#include "common/model/loss.hpp"
#include "common/model/architecture.hpp"

namespace gcnlab {

class Strategy;

// One graph-attention layer's per-vertex scores (Primitives::attention):
// per head, this rank's partial dots s_j = a_src · Z_j and d_i = a_dst · Z_i
// over its columns of Z = X W (rows of transformed_layout(l), one column per
// head, ld = heads), and the attention dropout of the step (p = 0: none).
struct Attention {
  ConstView src, dst;
  DropoutParams dropout{0, 0, 0.f};
};

// The attention primitives and their byte companions carried by one object
// (common/dist/gathered_attention.hpp): Strategy's defaults forward to
// Strategy::edge_attention() where a strategy returns one.
class EdgeAttention {
 public:
  virtual ~EdgeAttention() = default;
  virtual void forward(int l, const Attention& a) = 0;
  virtual void aggregate(int l, ConstView z, View out) = 0;
  virtual void backward(int l, const Attention& a, ConstView g, ConstView z, View dz, View ds, View dd) = 0;
  virtual void forward_bytes(int l, ByteModel& m) const = 0;
  virtual void aggregate_bytes(int l, std::int64_t cols, ByteModel& m) const = 0;
  virtual void backward_bytes(int l, ByteModel& m) const = 0;
  // Nonzeros of the edge tensors this rank keeps (the work of its edge softmax).
  virtual std::int64_t edges() const = 0;
};

// The rows and columns of an n x f activation matrix held by one rank.
struct Layout {
  std::vector<std::int64_t> vertices;  // original vertex id of each local row
  std::int64_t col0 = 0, cols = 0;     // local columns [col0, col0 + cols)
};


// Backend bytes one rank holds during training (device memory on GPUs), by
// owner. Analytic: each term is the size formula of a data structure (a sparse
// block from its rows and nnz, a buffer from its rows and widths), so that the
// allocator's measured peak can be checked against it (measured / analytic in
// every results file; transient setup copies and backend work areas are the gap).
struct MemoryNeed {
  double graph = 0;        // the strategy's sparse blocks and index lists
  double buffers = 0;      // its communication and work buffers
  double activations = 0;  // the trainer's activations, gradients, row ids, labels, loss workspace
  double weights = 0;      // W blocks, dW and optimiser state
  double total() const { return graph + buffers + activations + weights; }
};

template <class T>
double bytes_of(std::int64_t count) {
  return static_cast<double>(count) * sizeof(T);
}

// The order of a layer's forward product (--order). (ÂᵀX)W aggregates at width
// f_l, Âᵀ(XW) at f_{l+1}: cheaper in SpMM flops and, for the communicating
// strategies, in bytes when f_{l+1} < f_l. The backward pass's order is a
// second choice (BackwardOrder below).
enum class ProductOrder { aggregate_first, transform_first };
std::string to_string(ProductOrder o);

// --order: auto (transform first exactly where f_{l+1} < f_l) | aggregate |
// transform | a comma list with one of aggregate / transform per layer. With
// no dims only the syntax is checked.
std::vector<ProductOrder> parse_orders(const std::string& spec, const std::vector<std::int64_t>& dims = {});

// The order of a convolution's backward pass.
//   aggregate_first  U = Â G, dW = Xᵀ U, dX = U Wᵀ (CAGNET Eq. 2-3: dW = (ÂᵀX)ᵀG
//                    regrouped; the SpMM at width f_{l+1})
//   transform_first  dW = Tᵀ G with T = Âᵀ X kept from the forward, dT = G Wᵀ,
//                    dX = Â dT (autograd of (ÂᵀX)W; Plexus Alg. 2); needs the
//                    aggregate-first forward and one T per layer; without dX it
//                    is one GEMM and no SpMM (every strategy's layer 0 with
//                    fixed features; common/model/convolution.hpp).
enum class BackwardOrder { aggregate_first, transform_first };

// Where a layer's intermediate products live (see Strategy's primitives).
Layout aggregated_layout(const Strategy& s, int l);   // T_l = Âᵀ X_l and dT_l
// X_l W_l and U_l = Â G_l: layout(l)'s rows, layout(l+1)'s columns (each
// with all its heads where layer l averages heads: Architecture::head_mean).
Layout transformed_layout(const Strategy& s, const Architecture& a, int l);
// Layer l's heads over the columns of Z_l on a rank whose output columns
// (layout(l+1)'s) start at out_col0 (ew::HeadSplit).
ew::HeadSplit head_split(const Architecture& a, int l, std::int64_t out_col0);

// How the trainer lays out the activations and gradients of a rank.
//   per_layer  every layer keeps H, dropout(H), dX, Z and G in buffers of its
//              own (as CAGNET and DGL do: 4-6 buffers per layer);
//   shared     MG-GCN's buffer reuse (Balın et al. Sec. 4.2, Eq. 16-21, Fig. 4):
//              one buffer per layer holds its output Z, then H' = ReLU(Z) in
//              place, then G = dL/dZ, then dX; dropout's input is recomputed from
//              its keyed mask into one shared buffer. With the strategy's
//              broadcast buffers BC1, BC2 and the product buffer HW (the
//              trainer's work slot for the convolutions' intermediates) that
//              is L + 3 buffers in all (+1 with dropout), beside the input
//              features. G and dX share storage: the backward reads G before
//              it writes dX (linear_backward's contract).
enum class ActivationPlan { per_layer, shared };
std::string to_string(ActivationPlan p);

// What a model asks of a strategy beyond the graph convolution's primitives
// (models/registry.hpp fills it from --model; make_strategy refuses a
// strategy that cannot provide it, naming the model and the strategies that can).
struct ModelDemands {
  std::string name = "gcn";   // --model
  std::string title;          // one line, for the refusal
  // The norm blocks' collectives (RMSNorm's row sums, the residuals' reshard:
  // StrategyCaps::norm_blocks). Linear weight layers every strategy provides.
  bool norm_blocks = false;
  bool fixed_order = false;   // the model fixes every convolution's product order (--order must stay auto)
  // Its edge values have no sampled form (a mini-batch rescales GCN's Â,
  // ScaleGNN Eq. 24): full-graph training only (strategies with StrategyCaps::full_graph).
  bool full_graph_only = false;
  // Graph attention's edge tensors (Primitives::attention: strategies with StrategyCaps::attention).
  bool attention = false;
  // Its layers add a layer's input rows to its output (residuals, root terms),
  // so every layer's vertices are in one ordering: a strategy that permutes
  // them per layer (plexus-3d's double permutation, Plexus Sec. 5.1) keeps none.
  bool one_ordering = false;
};

// The settings a strategy is built with. The fields are the ones every
// strategy reads (grid, model, mini-batch); `options` holds each strategy's
// own, declared in its registry entry (algorithms/<name>/: name, type,
// default, choices, help) and read here by name.
struct StrategyOptions {
  std::string algo;
  std::vector<int> grid;  // empty: the strategy's default for the rank count
  std::string order = "auto";          // product order per layer (ProductOrder; checked against the registry's caps)
  bool learn_features = false;         // the input features are trained (layer 0 computes dL/dX)
  ModelDemands model;                  // what --model asks of a strategy beyond the convolution's primitives
  std::string comm_precision = "fp32"; // the PMM all-reduces in fp32 or bf16 (ScaleGNN Sec. V-B; registry caps)
  std::int64_t batch_size = 0;         // mini-batch training (restrict_to); 0: full graph
  int dp_groups = 1;                   // serial --batch-size: the oracle of D data-parallel groups (--dp-groups)
  std::uint64_t seed = 1;              // permutations

  // Strategy options by name without "--" ("agg-blocks"), as text. make_strategy
  // fills in every registered option's default; values of options the chosen
  // strategy does not declare are ignored.
  std::map<std::string, std::string> options;
  // The value of a registered option (an internal error if it was never filled in).
  const std::string& option(const std::string& name) const;
  std::int64_t integer_option(const std::string& name) const;
  bool on_off_option(const std::string& name) const { return option(name) == "on"; }
};

struct StrategyContext {
  Communicator& world;
  Backend& backend;
};

// The distributed primitives a model is written against (common/model/
// convolution.hpp; the trainer's RMSNorm and residuals). A Strategy provides
// them on its layouts; the byte tracer (common/model/byte_trace.hpp) provides
// them as counts of the Strategy's byte companions.
class Primitives {
 public:
  virtual ~Primitives() = default;

  // The primitives of layer l (common/model/convolution.hpp composes them).
  // Their operands' layouts: layout(l) and layout(l+1) for X_l and Z_l;
  // aggregated_layout(l) (layout(l+1)'s rows, layout(l)'s columns) for
  // T_l = Âᵀ X_l and its gradient; transformed_layout(l) (layout(l)'s rows,
  // layout(l+1)'s columns) for X_l W_l and Â G_l.
  //
  // aggregate(l, forward): in (rows of layout(l)) -> out (rows of layout(l+1));
  // aggregate(l, backward) is its adjoint, rows of layout(l+1) -> layout(l).
  // The columns are in's (whatever width; the same column split).
  virtual void aggregate(int l, Direction d, ConstView in, View out) = 0;
  // out = aggregate(l, d, in) + (t.scale + t.plus[0]) t.r: the aggregation with
  // a convolution's term on its own rows (Architecture::self_term: GIN's
  // (1 + ε) h_i), t.r in out's layout. Strategy's default aggregates, then
  // adds the term in an element-wise pass; a strategy whose aggregate is one
  // local product over whole output rows adds it in that product's output
  // pass (Backend::spmm_plus: serial), the same bits. It moves what aggregate moves.
  virtual void aggregate_plus(int l, Direction d, ConstView in, const RowTerm& t, View out) = 0;
  // Z = X W, X in aggregated_layout(l) (= layout(l) for a linear layer of
  // --model scalegnn and for strategies that allow the transform-first order).
  virtual void linear(int l, ConstView x, ConstView w, View z) = 0;
  // The backward of linear(): the complete (reduced) local block of dW = Xᵀ G,
  // and dX = G Wᵀ unless dx is null. G and dX must not share storage (one
  // GEMM reads the one and writes the other; under MG-GCN's shared plan a
  // layer's G_l and dX_l do: the caller passes dX elsewhere). It follows a
  // linear(l, ·, w, ·) of the same step with the same w (the same parameter's storage),
  // whose gathered W a strategy may keep (plexus-3d); a layer may multiply by
  // two weights (Architecture::self_term: W_l and its root term's).
  virtual void linear_backward(int l, ConstView x, ConstView g, ConstView w, View dw, View* dx) = 0;
  // z += x w, and linear_backward with dx += g wᵀ: the linear map added into
  // an output that holds a term already (GraphSAGE's root term R S on the
  // convolution's Z, its gradient G Sᵀ on the convolution's dX), offered by a
  // strategy whose linear maps are local GEMMs (Strategy::local_linear()): the
  // GEMM adds in its output pass (beta = 1), where x w would take a buffer of
  // its own and a pass that adds it. They move what linear and linear_backward move.
  virtual void linear_add(int l, ConstView x, ConstView w, View z) = 0;
  virtual void linear_backward_add(int l, ConstView x, ConstView g, ConstView w, View dw, View dx) = 0;
  // A convolution's term on its own input rows (Architecture::self_term):
  // forward, out (aggregated_layout(l)) = in (layout(l)); backward, out
  // (layout(l)) += in (aggregated_layout(l)). Pass::aligned and its adjoints
  // call it only for a strategy whose layers' rows differ (Strategy::same_rows()
  // false: plexus-3d, scalegnn-4d); elsewhere the layouts agree and X_l is used
  // as it is (no copy). Strategy's default refuses.
  virtual void align(int l, Direction d, ConstView in, View out) = 0;
  // Norm blocks (ScaleGNN Sec. IV-C4): the collectives of RMSNorm and of the
  // residual connections on this strategy's layouts, asked for only by a
  // model that demands them (ModelDemands::norm_blocks; Strategy's defaults refuse).
  // Sums per-row values of layout(l) over the ranks that hold the other
  // columns of the same rows (Eq. 29: the rows' sums of squares).
  virtual void sum_over_columns(int l, std::span<float> per_row) = 0;
  // Sums per-column values of layout(l) over the ranks that hold the other
  // rows of the same columns and over the data-parallel groups (dL/dγ). A
  // column may carry several values, contiguous (GAT's dL/da of a layer that
  // averages H heads: H per output column, Architecture::head_mean).
  // `per_column`: one contiguous row of them (a View, so that the byte tracer
  // reads its size).
  virtual void sum_over_rows(int l, View per_column) = 0;
  // y (layout `to`) = x (layout `from`), or y += x with `accumulate`: the same
  // global matrix in another layout (the residual's resharding).
  virtual void reshard(int from, int to, ConstView x, View y, bool accumulate) = 0;
  // Sums values that each rank computed from its block of layout(l) (a
  // scalar parameter's gradient, e.g. GIN's dL/dε = <X_l, align'(dA_l)>) over the
  // whole matrix, each block counted once: every rank gets the total. A
  // replica's values are left out (Strategy::first_copy). `values`: a
  // contiguous row of them (a View, so that the byte tracer reads its size).
  virtual void sum_over_layout(int l, View values) = 0;
  // Graph attention (GAT, Veličković et al. ICLR'18 Eq. 1-4 as PyG 2.3.1's
  // GATConv; Architecture::heads): per-edge, per-head values on layer l's
  // pattern (Âᵀ's: A + I, so every vertex attends to itself), recomputed every
  // step and kept by the strategy between the calls of one step (provided by
  // strategies with StrategyCaps::attention; Strategy's defaults refuse).
  //   attention(l, a)  α_ij = softmax over the in-edges j -> i of target i of
  //       e_ij = LeakyReLU(s_j + d_i) (max-subtracted), then β = dropout(α)
  //       keyed by (target, source, head). The strategy completes the partial
  //       dots over the ranks that split Z's columns and moves s to the sources'
  //       and d to the targets' blocks; it reduces the row max and sum over the
  //       ranks that split a row.
  //   aggregate_attention(l, Z, out): out_i = Σ_j β_ij Z_j per head, Z in
  //       transformed_layout(l), out in layout(l+1) (as aggregate's
  //       transform-first product).
  //   attention_backward(l, a, G, Z, dZ, ds, dd), G in layout(l+1): the
  //       aggregation's adjoint dZ_j = Σ_i β_ij G_i (transformed_layout(l));
  //       dβ_ij = G_i · Z_j per head (the SDDMM), dα = dropout'(dβ),
  //       dê_ij = α_ij (dα_ij - Σ_k α_ik dα_ik) · LeakyReLU'(s_j + d_i);
  //       ds_j = Σ_i dê_ij and dd_i = Σ_j dê_ij, both complete, on
  //       transformed_layout(l)'s rows (one column per head). One call, because
  //       βᵀG and the SDDMM read the same edges and G rows: the backend makes
  //       both in one pass (Backend::spmm_sddmm_edges).
  virtual void attention(int l, const Attention& a) = 0;
  virtual void aggregate_attention(int l, ConstView z, View out) = 0;
  virtual void attention_backward(int l, const Attention& a, ConstView g, ConstView z, View dz, View ds, View dd) = 0;
};

class Strategy : public Primitives {
 public:
  virtual ~Strategy() = default;

  // One line: algorithm, grid, block shapes, replication.
  virtual std::string describe() const = 0;
  virtual std::vector<int> grid() const = 0;
  virtual std::vector<int> coords() const = 0;

  // Number of parts a partitioner should cut the graph into: the strategy's
  // block rows (1d: P, 1.5d: P/c); strategies that only use the ordering keep the default.
  virtual int partition_parts() const = 0;

  // Reads this rank's blocks of Â/Âᵀ from the prepared graph and lays out
  // the model's weight layers (widths a.dims = f_0..f_L, their kinds).
  virtual void setup(const Graph& g, const Architecture& a) = 0;

  virtual const Layout& layout(int l) const = 0;
  virtual Block weight_block(int l) const = 0;

  // The order of layer l's backward where the model leaves it to the strategy
  // (BackwardOrder; convolution_backward_order decides): transform_first where
  // the layouts allow no other.
  virtual BackwardOrder backward_order(int l) const {
    (void)l;
    return BackwardOrder::aggregate_first;
  }

  // Whether every layer's layouts hold the same rows on this rank, on every
  // rank (aggregated_layout(l) = layout(l) for Primitives::align). A property
  // of the strategy, not of one rank's layouts: a rank whose rows happen to
  // agree still takes part in the others' align.
  virtual bool same_rows() const { return true; }
  // Whether this rank's block of layout(l) is the first copy of it (false on
  // the ranks that replicate a block another rank holds: 1.5D's c, Plexus's
  // third axis), so that sums over a whole matrix count each block once.
  virtual bool first_copy(int l) const {
    (void)l;
    return true;
  }
  // Whether linear()'s Z = X W and linear_backward()'s dX = G Wᵀ are each one
  // GEMM of this rank's operands, every rank's rows complete (serial, the
  // block-row strategies: of the two maps only dW is reduced), so that
  // linear_add and linear_backward_add can add into their outputs.
  virtual bool local_linear() const { return false; }
  // The accumulating forms for a local_linear() strategy: linear_backward's dW
  // and GEMMs with beta = 1 on the bound backend (an internal error elsewhere).
  void linear_add(int l, ConstView x, ConstView w, View z) final;
  void linear_backward_add(int l, ConstView x, ConstView g, ConstView w, View dw, View dx) final;
  void align(int l, Direction d, ConstView in, View out) override;
  void aggregate_plus(int l, Direction d, ConstView in, const RowTerm& t, View out) override;
  // One all-reduce over every rank, replicas contributing zeros: a handful of
  // values, so one collective serves every layout. Final: it needs no more of
  // a strategy than first_copy.
  void sum_over_layout(int l, View values) final;
  void sum_over_layout_bytes(int l, std::int64_t count, ByteModel& m) const;
  // make_strategy binds the run's world and backend (sum_over_layout's).
  void bind(const StrategyContext& ctx) { ctx_ = std::make_unique<StrategyContext>(ctx); }
  // The norm blocks' collectives: the defaults refuse (a strategy without caps.norm_blocks).
  void sum_over_columns(int l, std::span<float> per_row) override;
  void sum_over_rows(int l, View per_column) override;
  void reshard(int from, int to, ConstView x, View y, bool accumulate) override;
  // Graph attention: the defaults forward to edge_attention(), or refuse (a
  // strategy without caps.attention).
  virtual EdgeAttention* edge_attention() { return nullptr; }
  const EdgeAttention* edge_attention() const { return const_cast<Strategy*>(this)->edge_attention(); }
  void attention(int l, const Attention& a) override;
  void aggregate_attention(int l, ConstView z, View out) override;
  void attention_backward(int l, const Attention& a, ConstView g, ConstView z, View dz, View ds, View dd) override;

  // The forward product order of each layer (after setup). Strategies that
  // compute only their paper's (ÂᵀX)W keep the default.
  virtual std::vector<ProductOrder> orders(int layers) const {
    return std::vector<ProductOrder>(static_cast<std::size_t>(layers), ProductOrder::aggregate_first);
  }

  // The vertex permutation (Plexus Sec. 5.1) its graph must be prepared with: none | single | double.
  virtual std::string permutation() const { return "none"; }
  // The partitioner an in-memory dataset gets when --partitioner is not given.
  virtual std::string default_partitioner() const { return "block"; }
  // The trainer's buffer layout (ActivationPlan).
  virtual ActivationPlan activation_plan() const { return ActivationPlan::per_layer; }

  // Mini-batch training (ScaleGNN Sec. III-D, Alg. 1) in two halves, so that
  // the first can run ahead on a helper thread while the previous step trains
  // (Sec. V-A). cut(s) computes this rank's induced, rescaled blocks of sample
  // `s` (common/data/sampling.hpp) from host data only — no backend, no
  // communicator, no ledger — and may run concurrently with any member
  // function but setup. restrict_to(c) installs a cut: from then on the
  // strategy computes on it, or on the full graph again (nullptr: evaluation).
  // The layouts change; their rows are a subset of the full graph's. Only
  // strategies built with StrategyOptions::batch_size > 0 are asked; the
  // defaults refuse.
  virtual std::unique_ptr<SampleCut> cut(Sample s) const;
  virtual void restrict_to(const SampleCut* c);
  // Data parallelism (ScaleGNN Sec. IV-A): D groups of ranks, each training
  // on its own sample with replicated weights; {D, this rank's group}.
  virtual std::array<int, 2> data_parallel() const { return {1, 0}; }

  // The ranks that split the classes of the logits' rows and how the softmax
  // crosses them (default: each rank holds whole rows).
  virtual ClassSplit class_split() { return {}; }
  // Whether this rank's rows count in loss/accuracy sums (false on replicas).
  virtual bool counts_metrics() const { return true; }

  // Nonzeros of Â stored on this rank (load balance).
  virtual std::int64_t nnz_local() const = 0;
  // The primitives' byte companions: the wire bytes one call moves on this
  // rank, added to m, from the call's local shapes alone (no data, no
  // communication). The trainer's byte model is the model's step traced
  // through them (common/model/byte_trace.hpp), so no strategy writes a
  // model's epoch by hand. `cols`: the local columns of aggregate's operand.
  virtual void aggregate_bytes(int l, Direction d, std::int64_t cols, ByteModel& m) const = 0;
  virtual void linear_bytes(int l, ByteModel& m) const;
  virtual void linear_backward_bytes(int l, bool dx, ByteModel& m) const = 0;
  virtual void align_bytes(int l, Direction d, ByteModel& m) const;
  virtual void sum_over_columns_bytes(int l, ByteModel& m) const;
  virtual void sum_over_rows_bytes(int l, std::int64_t count, ByteModel& m) const;  // count: per_column's size
  virtual void reshard_bytes(int from, int to, ByteModel& m) const;
  virtual void attention_bytes(int l, ByteModel& m) const;
  virtual void aggregate_attention_bytes(int l, std::int64_t cols, ByteModel& m) const;
  virtual void attention_backward_bytes(int l, ByteModel& m) const;
  // Analytic backend bytes of this rank's graph blocks and buffers (graph + buffers terms).
  virtual MemoryNeed memory_need() const = 0;

 private:
  std::unique_ptr<StrategyContext> ctx_;
};

}  // namespace gcnlab

#include "algorithms/plexus-3d/plexus_3d.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/comm/process_grid.hpp"
#include "common/comm/wire.hpp"

namespace gcnlab {

using namespace plexus;

namespace {

Grid grid_from(const StrategyOptions& opts, int p) {
  const std::vector<int> dims = opts.grid.empty() ? default_grid(p, 3) : opts.grid;
  GCNLAB_CHECK(dims.size() == 3, "--algo plexus-3d needs --grid XxYxZ (got {})", format_grid(dims));
  GCNLAB_CHECK(dims[0] * dims[1] * dims[2] == p, "grid {} has {} processes but the job has {} ranks", format_grid(dims),
               dims[0] * dims[1] * dims[2], p);
  return {dims[0], dims[1], dims[2]};
}

// Plexus places Y innermost, then X, then Z (Sec. 4.2): the grid's rank order
// is (z, x, y) with y varying fastest, so a Y group is consecutive ranks
// (plexus::grid_rank).
ProcessGrid make_grid(Communicator& world, const Grid& g) { return ProcessGrid(world, {g[2], g[0], g[1]}, {"z", "x", "y"}); }

template <class T>
std::span<T> span_of(T* p, std::int64_t n) {
  return {p, static_cast<std::size_t>(n)};
}

// Elements of the largest partial sum of any layer (H, Q, dH or dF): what
// PartialSums stages in bf16.
std::int64_t largest_partial_sum(const std::vector<LayerBlocks>& blocks) {
  std::int64_t n = 0;
  for (const LayerBlocks& b : blocks)
    n = std::max({n, b.rows_out.count * b.cols_in.count, b.rows_out.count * b.cols_out.count,
                  b.rows_in.count * b.cols_in.count});
  return n;
}

// The best ordering the model and the run allow when --permutation is not
// given: Sec. 5.1's double permutation (a layer's rows and columns in two
// orderings that balance its shards); one ordering where GAT moves its scores
// d between two layers' rows (single); none where a model adds a layer's input
// rows to its output (residuals, root terms) or mini-batches are sampled
// (ScaleGNN Alg. 2). An explicit choice the model cannot take is refused.
std::string default_permutation(const StrategyOptions& opts) {
  if (opts.model.one_ordering || opts.batch_size > 0) return "none";
  return opts.model.attention ? "single" : "double";
}

}  // namespace

Plexus3DStrategy::Plexus3DStrategy(const StrategyOptions& opts, const StrategyContext& ctx)
    : world_(ctx.world),
      backend_(ctx.backend),
      ledger_(ctx.world.ledger()),
      g_(grid_from(opts, ctx.world.size())),
      grid_(make_grid(ctx.world, g_)),
      permutation_(parse_permutation(!opts.option("permutation").empty() ? opts.option("permutation")
                                                                        : default_permutation(opts))),
      agg_blocks_(static_cast<int>(opts.integer_option("agg-blocks"))),
      gemm_order_(opts.option("gemm-order")),
      seed_(opts.seed),
      learn_features_(opts.learn_features),
      sums_(ctx.backend, parse_comm_precision(opts.comm_precision)),
      keep_host_shards_(opts.batch_size > 0) {
  GCNLAB_CHECK(agg_blocks_ >= 1, "--agg-blocks must be >= 1");
  GCNLAB_CHECK(gemm_order_ == "auto" || gemm_order_ == "direct" || gemm_order_ == "reversed",
               "unknown --gemm-order '{}' (expected auto, direct or reversed)", gemm_order_);
  for (int axis = 0; axis < 3; ++axis) k_[axis] = grid_.coord(kAxisNames[axis]);
  GCNLAB_ASSERT(grid_rank(g_, k_) == ctx.world.rank());
  GCNLAB_CHECK(!opts.model.attention || (agg_blocks_ == 1 && gemm_order_ != "reversed" &&
                                         sums_.precision() == CommPrecision::fp32),
               "--model {} under plexus-3d runs Plexus's GCN-specific options at their defaults: --agg-blocks 1, "
               "--gemm-order auto or direct (dW = Xᵀ dZ), --comm-precision fp32 (they shape its GCN aggregation, "
               "dW and partial sums)",
               opts.model.name);
  GCNLAB_CHECK(!opts.model.attention || permutation_.kind != Permutation::dual,
               "--model {} under plexus-3d moves each layer's scores d from its sources' rows to its targets' rows in "
               "one vertex ordering: --permutation none or single (got {})",
               opts.model.name, to_string(permutation_));
  elide_ = opts.model.attention && opts.on_off_option("elide");
}

std::string Plexus3DStrategy::describe() const {
  if (shape_.attention)
    return fmt::format("plexus-3d (Plexus Sec. 3) with graph attention: grid {}x{}x{} (X x Y x Z, Y innermost); "
                       "permutation {}; features over y, rows over x and z; {} distinct adjacency shard(s) per rank, "
                       "{} nnz, each edge tensor replicated over y; elide {}",
                       g_[0], g_[1], g_[2], to_string(permutation_), std::min(2, shape_.layers()),
                       attention_.stored(), elide_ ? "on" : "off");
  std::string orders;
  for (std::size_t l = 0; l < dw_order_.size(); ++l)
    orders += fmt::format("{}{}", l ? ", " : "", dw_order_[l] == GemmOrder::direct ? "direct" : "reversed");
  return fmt::format("plexus-3d (Plexus Sec. 3): grid {}x{}x{} (X x Y x Z, Y innermost); permutation {}; "
                     "{} distinct adjacency shard(s) per rank, {} nnz; aggregation in {} row block(s); "
                     "F and W sharded over Z; partial sums all-reduced in {}; dW GEMM order per layer: {}",
                     g_[0], g_[1], g_[2], to_string(permutation_), full_.shards.size(), full_.nnz, agg_blocks_,
                     to_string(sums_.precision()), orders);
}

void Plexus3DStrategy::setup(const Graph& g, const Architecture& arch) {
  n_ = g.n();
  dims_ = arch.dims;
  shape_ = ModelShape(arch);
  rows_ = RowSplit(n_);
  cur_ = &full_;
  check_graph(g, arch);
  full_ = Geometry{};
  lay_out(g);
  cut_shards(g);
  w_full_.clear();
  if (shape_.attention) return setup_attention(g, arch);
  allocate_workspaces();
  choose_gemm_orders();
}

void Plexus3DStrategy::check_graph(const Graph& g, const Architecture& arch) const {
  GCNLAB_CHECK(n_ >= static_cast<std::int64_t>(*std::max_element(g_.begin(), g_.end())),
               "{} vertices cannot fill grid {}x{}x{}", n_, g_[0], g_[1], g_[2]);
  // Sec. 5.1: the orderings were made when the graph was prepared (in memory
  // for this run, or once by `gcnlab prepare`); they must be this run's.
  const GraphLayout& prepared = g.layout();
  GCNLAB_CHECK(prepared.permutation == to_string(permutation_) && prepared.seed == seed_,
               "the graph was prepared with --permutation {} --seed {}; train with the same (got --permutation {} "
               "--seed {})",
               prepared.permutation, prepared.seed, to_string(permutation_), seed_);
  GCNLAB_CHECK((!arch.residual() && !arch.self_term) || permutation_.kind == Permutation::none,
               "--model {} moves a layer's input rows into its output's layout (residuals, root terms) in one vertex "
               "ordering: --permutation must be none (got {})",
               arch.model, to_string(permutation_));
  GCNLAB_CHECK(!keep_host_shards_ || permutation_.kind == Permutation::none,
               "mini-batches are sampled in one vertex ordering (ScaleGNN Alg. 2): --permutation must be none "
               "(got {})", to_string(permutation_));
}

void Plexus3DStrategy::lay_out(const Graph& g) {
  for (int l = 0; l <= shape_.layers(); ++l) {
    const InputBlock b = input_block(n_, shape_, g_, k_, l);
    Layout lay;
    lay.vertices = g.vertices(ordering_id(permutation_, l), b.rows.first, b.rows.end());
    lay.col0 = b.cols.first;
    lay.cols = b.cols.count;
    full_.layouts.push_back(std::move(lay));
  }
}

void Plexus3DStrategy::cut_shards(const Graph& g) {
  // Adjacency shards: A^(l) = Π_{l+1} Âᵀ Π_lᵀ restricted to rows R_c (ordering
  // l+1) and columns C_a (ordering l); layers with the same planes and
  // orderings share one shard.
  Geometry& geo = full_;
  host_shards_.clear();
  shard_ranges_.clear();
  std::map<std::tuple<int, int, int, int>, int> index;
  for (int l = 0; l < shape_.layers(); ++l) {
    const LayerBlocks b = layer_blocks(n_, shape_, g_, k_, l);
    geo.blocks.push_back(b);
    if (!conv(l) || shape_.attention) {  // GAT's shards are its edge tensors' (attention_)
      geo.shard_of_layer.push_back(-1);
      continue;
    }
    const int r = ordering_id(permutation_, l + 1), c = ordering_id(permutation_, l);
    const auto key = std::make_tuple(b.ax.c, b.ax.a, r, c);
    if (auto it = index.find(key); it != index.end()) {
      geo.shard_of_layer.push_back(it->second);
      continue;
    }
    HostCsr a = g.block(Direction::forward, r, b.rows_out.first, b.rows_out.end(), c, b.rows_in.first,
                        b.rows_in.end());
    geo.nnz += a.nnz();
    index.emplace(key, static_cast<int>(geo.shards.size()));
    geo.shard_of_layer.push_back(static_cast<int>(geo.shards.size()));
    geo.shards.push_back(make_shard(a));
    if (keep_host_shards_) {
      host_shards_.push_back(std::move(a));
      shard_ranges_.push_back({b.rows_out, b.rows_in});
    }
  }
}

void Plexus3DStrategy::allocate_workspaces() {
  const std::vector<LayerBlocks>& blocks = full_.blocks;
  std::int64_t dw = 0;
  for (const LayerBlocks& b : blocks) {
    std::vector<GatheredWeight> weights(shape_.self_term ? 2 : 1);  // W_l, and a root term's S_l
    if (g_[b.ax.c] > 1)
      for (GatheredWeight& w : weights) w.full = Dense(backend_, b.cols_in.count, b.cols_out.count);
    w_full_.push_back(std::move(weights));
    dw = std::max(dw, b.cols_in.count * b.cols_out.count);
  }
  sums_.reserve(largest_partial_sum(blocks));
  const LayerBlocks& b0 = blocks.front();
  f_full_ = conv(0) ? Dense(backend_, b0.rows_in.count, b0.cols_in.count) : Dense();
  dw_part_ = Dense(backend_, 1, dw);
  dw_t_ = Dense(backend_, 1, dw);
  dx_part_ = learn_features_ ? Dense(backend_, b0.rows_in.count, b0.cols_in.count) : Dense();
}

void Plexus3DStrategy::setup_attention(const Graph& g, const Architecture& arch) {
  const int L = shape_.layers();
  std::vector<int> orderings;
  for (int l = 0; l <= L; ++l) orderings.push_back(ordering_id(permutation_, l));
  attention_ = PlexusAttention(backend_, ledger_, grid_, g, arch, g_, k_, orderings, elide_);
  // Â's share of this rank: the Y ranks along y split each shard's products by
  // features, so its nonzeros / Y (Σ over ranks = nnz, as a 2D block's; the
  // edge softmax's Y-fold work is edge_attention()->edges(), as 2d's block row).
  full_.nnz = std::llround(static_cast<double>(attention_.edges()) / g_[1]);
  std::int64_t full = 0, mine = 0;  // Zᵀ's elements
  for (int l = 0; l < L; ++l) {
    const LayerBlocks& b = full_.blocks[static_cast<std::size_t>(l)];
    full = std::max(full, b.w_cols.count * b.x_rows.count);
    mine = std::max(mine, b.cols_out.count * shape_.averaged(l) * b.x_rows.count);
  }
  if (along(1).size() > 1) zt_full_ = Dense(backend_, 1, full), zt_mine_ = Dense(backend_, 1, mine);
  for (Dense* gcn : {&f_full_, &dw_part_, &dw_t_, &dx_part_}) *gcn = Dense();  // GCN's buffers
  dw_order_.assign(full_.blocks.size(), GemmOrder::direct);
}

namespace {

struct PlexusCut final : SampleCut {
  std::vector<Layout> layouts;  // per layer
  std::vector<HostCsr> shards;  // the induced blocks of the distinct shards
};

}  // namespace

std::unique_ptr<SampleCut> Plexus3DStrategy::cut(Sample s) const {
  GCNLAB_CHECK(keep_host_shards_, "plexus-3d was set up without mini-batches");
  GCNLAB_ASSERT(s.n == n_);
  auto c = std::make_unique<PlexusCut>();
  // Alg. 2 lines 4-5 and 18: this rank's sampled rows are the sample's
  // positions inside its full rows; their vertices, features and labels are
  // the full layout's at those positions.
  const int L = static_cast<int>(dims_.size()) - 1;
  for (int l = 0; l <= L; ++l) {
    const InputBlock full = input_block(n_, shape_, g_, k_, l);
    Layout lay{{}, full_.layouts[l].col0, full_.layouts[l].cols};
    for (const std::int64_t q : sampled_positions(s, full.rows))
      lay.vertices.push_back(full_.layouts[l].vertices[q - full.rows.first]);
    c->layouts.push_back(std::move(lay));
  }
  // Lines 6-17: the induced, rescaled block of every distinct shard.
  for (std::size_t i = 0; i < host_shards_.size(); ++i) {
    const auto [r, cols] = shard_ranges_[i];
    c->shards.push_back(induced_block(host_shards_[i], r.first, cols.first, sampled_positions(s, r),
                                      sampled_positions(s, cols), s.inclusion));
  }
  c->sample = std::move(s);
  return c;
}

void Plexus3DStrategy::restrict_to(const SampleCut* c) {
  if (!c) {
    rows_ = RowSplit(n_);
    cur_ = &full_;
    return;
  }
  const auto& cut = dynamic_cast<const PlexusCut&>(*c);
  sample_ = cut.sample;
  rows_ = RowSplit(sample_);
  Geometry& geo = sampled_;
  geo.layouts = cut.layouts;
  geo.blocks.clear();
  geo.shards.clear();
  geo.shard_of_layer = full_.shard_of_layer;
  geo.nnz = 0;
  for (int l = 0; l + 1 < static_cast<int>(dims_.size()); ++l) geo.blocks.push_back(layer_blocks(rows_, shape_, g_, k_, l));
  for (const HostCsr& a : cut.shards) {
    geo.nnz += a.nnz();
    geo.shards.push_back(make_shard(a));
  }
  cur_ = &sampled_;
}

MemoryNeed Plexus3DStrategy::memory_need() const {
  // Sec. 4: per distinct shard A^(l) its aggregation row blocks and transpose; per
  // layer the all-gathered W; the all-gathered F of layer 0, the dW partial
  // buffers, (learned features) dX's partial and (bf16) the partial sums'
  // staging. H (kept for dW) and dH are the trainer's (ConvolutionScratch).
  // A mini-batch adds its sampled shards; the buffers are the full graph's.
  MemoryNeed m;
  if (shape_.attention) {  // GAT: the shards and their edge tensors; Zᵀ's two buffers
    m.buffers = attention_.bytes() + bytes_of<float>(zt_full_.size() + zt_mine_.size());
    return m;
  }
  for (const Geometry* geo : {&full_, &sampled_})
    for (const Shard& s : geo->shards) {
      for (const Csr& a : s.row_blocks) m.graph += csr_bytes(a);
      m.graph += csr_bytes(s.transposed);
    }
  std::int64_t floats = 0, dw = 0;
  for (const LayerBlocks& b : full_.blocks) {
    floats += g_[b.ax.c] > 1 ? b.cols_in.count * b.cols_out.count * (shape_.self_term ? 2 : 1) : 0;
    dw = std::max(dw, b.cols_in.count * b.cols_out.count);
  }
  const LayerBlocks& b0 = full_.blocks.front();
  floats += (conv(0) ? b0.rows_in.count * b0.cols_in.count * (learn_features_ ? 2 : 1) : 0) + 2 * dw;
  std::int64_t staging = 0;  // the residuals' messages (the largest; a sample's are smaller)
  for (int l = 0; l < shape_.layers(); ++l) {
    if (shape_.norm_after(l))
      staging = std::max({staging, residual_reshard(n_, shape_, g_, k_, l, l + 1).staging_elements(),
                          residual_reshard(n_, shape_, g_, k_, l + 1, l).staging_elements()});
    if (shape_.self_term)
      staging = std::max({staging, align_reshard(n_, shape_, g_, k_, l, false).staging_elements(),
                          align_reshard(n_, shape_, g_, k_, l, true).staging_elements()});
  }
  floats += staging;
  m.buffers = bytes_of<float>(floats);
  if (sums_.precision() == CommPrecision::bf16) m.buffers += bytes_of<bf16>(largest_partial_sum(full_.blocks));
  return m;
}

void Plexus3DStrategy::weight_gradient(int l, ConstView h, ConstView g, View dw) {
  auto t = ledger_.time(Category::gemm);
  if (dw_order_[l] == GemmOrder::direct) {
    backend_.gemm(Op::T, Op::N, 1.f, h, g, 0.f, dw);
    return;
  }
  View dw_t{dw_t_.data(), dw.cols, dw.rows, dw.rows};
  backend_.gemm(Op::T, Op::N, 1.f, g, h, 0.f, dw_t);
  backend_.transpose(dw_t, dw);
}

// --gemm-order auto follows the backend's fixed rule (Backend::prefers_reversed_tn_gemm:
// reversed on GPU BLAS, Plexus Sec. 5.3; direct on the host). It once timed both orders at
// setup and kept the faster: where the two round differently (OpenBLAS's Haswell/Zen
// kernels), the machine's load then decided the bits of every later epoch (issue 35).
void Plexus3DStrategy::choose_gemm_orders() {
  const bool reversed =
      gemm_order_ == "reversed" || (gemm_order_ == "auto" && backend_.prefers_reversed_tn_gemm());
  dw_order_.assign(full_.blocks.size(), reversed ? GemmOrder::reversed : GemmOrder::direct);
}

Plexus3DStrategy::Shard Plexus3DStrategy::make_shard(const HostCsr& a) {
  Shard s;
  s.nnz = a.nnz();
  const int K = static_cast<int>(std::min<std::int64_t>(agg_blocks_, std::max<std::int64_t>(a.rows, 1)));
  for (int kb = 0; kb < K; ++kb) {  // the aggregation's row blocks (Sec. 5.2)
    const Range r = block_range(a.rows, K, kb);
    s.row_blocks.push_back(upload(backend_, extract_rows(a, r.first, r.end()), RowStorage::sparse_if_smaller));
    s.block_rows.push_back(r.count);
  }
  s.transposed = upload(backend_, transpose(a), RowStorage::sparse_if_smaller);
  return s;
}

Block Plexus3DStrategy::weight_block(int l) const {
  const LayerBlocks& b = cur_->blocks[l];
  return {b.w_rows.first, b.w_rows.count, b.w_cols.first, b.w_cols.count};
}

void Plexus3DStrategy::aggregate_blocks(const Shard& s, Communicator& group, ConstView f, View h) {
  std::vector<Communicator::Pending> pending;
  std::int64_t row0 = 0;
  for (std::size_t kb = 0; kb < s.row_blocks.size(); ++kb) {
    View hb{h.data + row0 * h.ld, s.block_rows[kb], h.cols, h.ld};
    {
      auto t = ledger_.time(Category::spmm);
      backend_.spmm(s.row_blocks[kb], f, hb, 0.f);
    }
    if (group.size() > 1) pending.push_back(sums_.post(group, hb));  // Alg. 1 line 5, one block at a time (Sec. 5.2)
    row0 += hb.rows;
  }
  for (auto& p : pending) p.wait();
  sums_.finish();
}

void Plexus3DStrategy::aggregate(int l, Direction d, ConstView in, View out) {
  const LayerBlocks& b = cur_->blocks[l];
  Communicator& over_a = along(b.ax.a);
  Communicator& over_c = along(b.ax.c);
  if (d == Direction::forward) {
    ConstView f = in;
    if (l == 0 && over_c.size() > 1) {  // Alg. 1 line 3: F is sharded over c
      const auto counts = rows_.sub_block_elements(g_[b.ax.a], k_[b.ax.a], g_[b.ax.c], b.cols_in.count);
      over_c.allgather(span_of(in.data, in.rows * in.cols),
                       span_of(f_full_.data(), b.rows_in.count * b.cols_in.count), counts, Category::allgather);
      f = ConstView{f_full_.data(), b.rows_in.count, b.cols_in.count, b.cols_in.count};
    }
    aggregate_blocks(shard(l), over_a, f, out);  // lines 4-5
    return;
  }
  // Alg. 2 lines 7-8: dF = Aᵀ dH, partial over c.
  const bool scatter = l == 0 && over_c.size() > 1;  // the learned input features are sharded over c
  View df = scatter ? View{dx_part_.data(), b.rows_in.count, b.cols_in.count, b.cols_in.count} : out;
  {
    auto t = ledger_.time(Category::spmm);
    backend_.spmm(shard(l).transposed, in, df, 0.f);
  }
  if (scatter) {
    over_c.reduce_scatter(span_of<const float>(df.data, df.size()), span_of(out.data, out.size()),
                          rows_.sub_block_elements(g_[b.ax.a], k_[b.ax.a], g_[b.ax.c], b.cols_in.count),
                          Category::reduce_scatter);
  } else if (l > 0 && over_c.size() > 1) {
    sums_.allreduce(over_c, df);
  }
}

Dense& Plexus3DStrategy::gathered(int l, const float* source) {
  std::vector<GatheredWeight>& slots = w_full_[static_cast<std::size_t>(l)];
  for (GatheredWeight& w : slots)
    if (w.source == source) return w.full;
  for (GatheredWeight& w : slots)  // its first linear(): the next free slot
    if (!w.source) return w.source = source, w.full;
  fail("internal: layer {} of plexus-3d multiplies by more weights than its model declares", l);
}

void Plexus3DStrategy::linear(int l, ConstView h, ConstView w, View z) {
  if (shape_.attention) return attention_linear(l, h, w, z);
  const LayerBlocks& b = cur_->blocks[l];
  Communicator& over_b = along(b.ax.b);
  Communicator& over_c = along(b.ax.c);
  if (over_c.size() > 1) {  // line 7
    over_c.allgather(span_of(w.data, w.rows * w.cols), gathered(l, w.data).span(),
                     row_block_elements(b.cols_in.count, over_c.size(), b.cols_out.count), Category::allgather);
  }
  const ConstView w_full = over_c.size() > 1 ? ConstView(gathered(l, w.data)) : w;
  {
    auto t = ledger_.time(Category::gemm);  // line 8
    backend_.gemm(Op::N, Op::N, 1.f, h, w_full, 0.f, z);
  }
  if (over_b.size() > 1) sums_.allreduce(over_b, z);  // line 9
}

void Plexus3DStrategy::linear_backward(int l, ConstView h, ConstView g, ConstView w, View dw, View* dh) {
  if (shape_.attention) return attention_linear_backward(l, h, g, w, dw, dh);
  const LayerBlocks& b = cur_->blocks[l];
  Communicator& over_a = along(b.ax.a);
  Communicator& over_c = along(b.ax.c);

  // Alg. 2 lines 2-3: dW = Hᵀ dQ, partial over c, reduce-scattered into the W shards.
  View dw_full = over_c.size() > 1 ? View{dw_part_.data(), b.cols_in.count, b.cols_out.count, b.cols_out.count} : dw;
  weight_gradient(l, h, g, dw_full);
  if (over_c.size() > 1) {
    over_c.reduce_scatter(span_of<const float>(dw_full.data, dw_full.size()), span_of(dw.data, dw.size()),
                          row_block_elements(b.cols_in.count, over_c.size(), b.cols_out.count),
                          Category::reduce_scatter);
  }
  if (!dh) return;

  // lines 5-6: dH = dQ Wᵀ, partial over a (a linear layer's dX).
  {
    auto t = ledger_.time(Category::gemm);
    backend_.gemm(Op::N, Op::T, 1.f, g, over_c.size() > 1 ? ConstView(gathered(l, w.data)) : w, 0.f, *dh);
  }
  if (over_a.size() > 1) sums_.allreduce(over_a, *dh);
}

std::array<View, 2> Plexus3DStrategy::zt_views(int l) {
  const LayerBlocks& b = cur_->blocks[l];
  const std::int64_t rows = b.x_rows.count;
  return {View{zt_full_.data(), b.w_cols.count, rows, rows},
          View{zt_mine_.data(), b.cols_out.count * shape_.averaged(l), rows, rows}};
}

// Zᵀ's row blocks over b: F'_b's rows, each with the heads layer l averages (class-major).
std::vector<std::int64_t> Plexus3DStrategy::zt_blocks(int l) const {
  const LayerBlocks& b = cur_->blocks[l];
  return row_block_elements(dims_[static_cast<std::size_t>(l + 1)], along(b.ax.b).size(),
                            b.x_rows.count * shape_.averaged(l));
}

// GAT (decomposition.hpp): X (R_{a,c} x F_b) W (F_b x f'), partial over b, is
// reduce-scattered over b into Z's columns F'_b. The reduce-scatter's blocks
// are contiguous in Zᵀ = Wᵀ Xᵀ, so the product is computed transposed.
void Plexus3DStrategy::attention_linear(int l, ConstView x, ConstView w, View z) {
  const LayerBlocks& b = cur_->blocks[l];
  Communicator& over_b = along(b.ax.b);
  if (over_b.size() == 1) {
    auto t = ledger_.time(Category::gemm);
    backend_.gemm(Op::N, Op::N, 1.f, x, w, 0.f, z);
    return;
  }
  const auto [full, mine] = zt_views(l);
  {
    auto t = ledger_.time(Category::gemm);
    backend_.gemm(Op::T, Op::T, 1.f, w, x, 0.f, full);
  }
  over_b.reduce_scatter(std::span<const float>(full.data, static_cast<std::size_t>(full.size())),
                        span_of(mine.data, mine.size()), zt_blocks(l), Category::reduce_scatter);
  auto t = ledger_.time(Category::gemm);
  backend_.transpose(mine, z);
}

// Its backward: dZ all-gathered over b (as Zᵀ), dW = Xᵀ dZ partial over the
// rows' axes a and c (all-reduced over the plane), dX = dZ Wᵀ local.
void Plexus3DStrategy::attention_linear_backward(int l, ConstView x, ConstView g, ConstView w, View dw, View* dx) {
  const LayerBlocks& b = cur_->blocks[l];
  Communicator& over_b = along(b.ax.b);
  if (over_b.size() == 1) {
    auto t = ledger_.time(Category::gemm);
    backend_.gemm(Op::T, Op::N, 1.f, x, g, 0.f, dw);
    if (dx) backend_.gemm(Op::N, Op::T, 1.f, g, w, 0.f, *dx);
  } else {
    const auto [full, mine] = zt_views(l);
    {
      auto t = ledger_.time(Category::gemm);
      backend_.transpose(g, mine);
    }
    over_b.allgather(std::span<const float>(mine.data, static_cast<std::size_t>(mine.size())),
                     span_of(full.data, full.size()), zt_blocks(l), Category::allgather);
    auto t = ledger_.time(Category::gemm);
    backend_.gemm(Op::T, Op::T, 1.f, x, full, 0.f, dw);
    if (dx) backend_.gemm(Op::T, Op::T, 1.f, full, w, 0.f, *dx);
  }
  Communicator& plane = grid_.along({kAxisNames[b.ax.a], kAxisNames[b.ax.c]});
  if (plane.size() > 1)
    plane.allreduce(std::span<float>(dw.data, static_cast<std::size_t>(dw.size())), ReduceOp::sum,
                    Category::allreduce);
}

void Plexus3DStrategy::attention_linear_bytes(int l, bool backward, ByteModel& m) const {
  const LayerBlocks& b = cur_->blocks[l];
  Communicator& over_b = along(b.ax.b);
  const double f = static_cast<double>(b.w_cols.count), rows = static_cast<double>(b.x_rows.count);
  const double mine = static_cast<double>(b.cols_out.count * shape_.averaged(l));  // Zᵀ's rows here
  if (!backward) {
    if (over_b.size() > 1)
      m.add(Category::reduce_scatter, over_b, wire::reduce_scatter(mine * rows * sizeof(float), over_b.size()));
    return;
  }
  if (over_b.size() > 1) m.add(Category::allgather, over_b, (f - mine) * rows * sizeof(float));
  Communicator& plane = grid_.along({kAxisNames[b.ax.a], kAxisNames[b.ax.c]});
  if (plane.size() > 1)
    m.add(Category::allreduce, plane, wire::allreduce(bytes_of<float>(b.w_rows.count * b.w_cols.count), plane.size()));
}

ClassSplit Plexus3DStrategy::class_split() {
  // The logits have their columns (classes) over a_{L-1} (Plexus's model:
  // = b_L); the row max and sum are all-reduced over them.
  return {&along(matrix_axes(shape_, shape_.layers()).cols), SoftmaxComm::reduce_stats, {}};
}

bool Plexus3DStrategy::counts_metrics() const {
  // ... and are replicated over the third axis (Plexus's model: c_L = b_{L-1}).
  return first_copy(shape_.layers());
}

bool Plexus3DStrategy::first_copy(int l) const {
  if (l == 0 && conv(0)) return true;  // X_0 is sharded over the third axis too (Sec. 3.1, input_block)
  const MatrixAxes m = matrix_axes(shape_, l);  // rows and columns split over two axes, replicated over the third
  if (m.minor >= 0) return true;                // GAT's: over all three
  return k_[3 - m.rows - m.cols] == 0;
}

void Plexus3DStrategy::add_step(int l, Step step, ByteModel& m) const {
  for (const Collective& c : step_collectives(rows_, shape_, g_, k_, l, step, wire_element_bytes(sums_.precision())))
    m.add(c.category, along(c.axis), c.wire_bytes);
}

void Plexus3DStrategy::aggregate_bytes(int l, Direction d, std::int64_t, ByteModel& m) const {
  add_step(l, d == Direction::forward ? Step::aggregate_forward : Step::aggregate_backward, m);
}

void Plexus3DStrategy::linear_bytes(int l, ByteModel& m) const {
  if (shape_.attention) return attention_linear_bytes(l, false, m);
  add_step(l, Step::linear, m);
}

void Plexus3DStrategy::linear_backward_bytes(int l, bool dx, ByteModel& m) const {
  if (shape_.attention) return attention_linear_bytes(l, true, m);
  add_step(l, dx ? Step::linear_backward_dx : Step::linear_backward, m);
}

// RMSNorm's sums on layout(l), the output of layer l - 1
void Plexus3DStrategy::sum_over_columns_bytes(int l, ByteModel& m) const { add_step(l - 1, Step::row_sums, m); }

void Plexus3DStrategy::sum_over_rows_bytes(int l, std::int64_t count, ByteModel& m) const {
  if (!shape_.attention) return add_step(l - 1, Step::column_sums, m);
  Communicator& group = over_rows(l);  // GAT's dL/db, dL/da_src, dL/da_dst
  if (group.size() > 1) m.add(Category::allreduce, group, wire::allreduce(bytes_of<float>(count), group.size()));
}

Communicator& Plexus3DStrategy::over_rows(int l) const {
  const MatrixAxes ax = matrix_axes(shape_, l);
  if (ax.minor < 0) return along(ax.rows);
  return grid_.along({kAxisNames[ax.rows], kAxisNames[ax.minor]});
}

void Plexus3DStrategy::reshard_bytes(int from, int to, ByteModel& m) const {
  if (world_.size() == 1) return;
  const Collective c = reshard_collective(rows_, shape_, g_, k_, std::min(from, to), /*backward=*/from > to);
  m.add(c.category, world_, c.wire_bytes);
}

void Plexus3DStrategy::sum_over_columns(int l, std::span<float> per_row) {
  Communicator& group = along(matrix_axes(shape_, l).cols);  // Eq. 29
  if (group.size() > 1) group.allreduce(per_row, ReduceOp::sum, Category::allreduce);
}

void Plexus3DStrategy::sum_over_rows(int l, View per_column) {
  Communicator& group = over_rows(l);
  if (group.size() > 1) group.allreduce(row_span(per_column), ReduceOp::sum, Category::allreduce);
}

void Plexus3DStrategy::align_bytes(int l, Direction d, ByteModel& m) const {
  if (world_.size() == 1) return;
  m.add(Category::alltoall, world_, align_reshard(rows_, shape_, g_, k_, l, d == Direction::backward).wire_bytes());
}

void Plexus3DStrategy::align(int l, Direction d, ConstView in, View out) {
  const bool backward = d == Direction::backward;
  align_reshard(rows_, shape_, g_, k_, l, backward).run(world_, backend_, in, out, backward, reshard_staging_);
}

void Plexus3DStrategy::reshard(int from, int to, ConstView x, View y, bool accumulate) {
  residual_reshard(rows_, shape_, g_, k_, from, to).run(world_, backend_, x, y, accumulate, reshard_staging_);
}

}  // namespace gcnlab

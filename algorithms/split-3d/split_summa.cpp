#include "algorithms/split-3d/split_summa.hpp"

#include <algorithm>

#include <fmt/ranges.h>

#include "common/comm/wire.hpp"
#include "common/core/blocks.hpp"
#include "common/dist/column_sums.hpp"

namespace gcnlab {

namespace {
std::vector<std::string> axis_names(std::size_t n) {
  return n == 2 ? std::vector<std::string>{"x", "y"} : std::vector<std::string>{"x", "y", "z"};
}
}  // namespace

SplitSummaStrategy::SplitSummaStrategy(const StrategyOptions& opts, const StrategyContext& ctx, std::vector<int> dims)
    : grid_(ctx.world, dims, axis_names(dims.size())),
      world_(ctx.world),
      row_(grid_.along({"y"})),
      col_(grid_.along({"x"})),
      fiber_(dims.size() > 2 ? &grid_.along({"z"}) : nullptr),
      backend_(ctx.backend),
      ledger_(ctx.world.ledger()),
      block_(opts.integer_option("block")),
      softmax_(parse_softmax_comm(opts.option("softmax"))),
      elide_(opts.on_off_option("elide")) {
  GCNLAB_CHECK(block_ >= 0, "--block must be >= 0");
  const std::string& dw_reduce = opts.option("dw-reduce");
  GCNLAB_CHECK(dw_reduce == "summa" || dw_reduce == "allreduce",
               "--dw-reduce takes summa (CAGNET: dense SUMMA + all-gather) or allreduce (got '{}')", dw_reduce);
  dw_reduce_ = dw_reduce == "summa" ? DwReduce::summa : DwReduce::allreduce;
}

std::pair<std::int64_t, std::int64_t> SplitSummaStrategy::features(std::int64_t f, int j) const {
  const auto off = block_offsets(f, Y());
  return {off[j], off[j + 1] - off[j]};
}

std::pair<std::int64_t, std::int64_t> SplitSummaStrategy::weight_features(int l, int j) const {
  const auto [first, count] = features(dims_[l + 1], j);
  const int m = averaged_[l];  // Z's columns of F_j: all their heads (class-major)
  return {first * m, count * m};
}

std::pair<std::int64_t, std::int64_t> SplitSummaStrategy::weight_rows(std::int64_t f, int i) const {
  const auto off = block_offsets(f, X());
  return {off[i], off[i + 1] - off[i]};
}

std::pair<std::int64_t, std::int64_t> SplitSummaStrategy::fiber_rows(std::int64_t f, int i, int k) const {
  const auto off = block_offsets(weight_rows(f, i).second, Z());
  return {off[k], off[k + 1] - off[k]};
}

namespace {
// [a0, a0 + a) ∩ [b0, b0 + b) as (first, count)
std::pair<std::int64_t, std::int64_t> overlap(std::pair<std::int64_t, std::int64_t> a,
                                              std::pair<std::int64_t, std::int64_t> b) {
  const std::int64_t first = std::max(a.first, b.first);
  return {first, std::max<std::int64_t>(0, std::min(a.first + a.second, b.first + b.second) - first)};
}
}  // namespace

std::vector<std::int64_t> SplitSummaStrategy::sub_blocks(const std::vector<std::int64_t>& row_off, int ii) const {
  auto s = block_offsets(row_off[ii + 1] - row_off[ii], Z());
  for (auto& v : s) v += row_off[ii];
  return s;
}

void SplitSummaStrategy::setup(const Graph& g, const Architecture& arch) {
  const std::vector<std::int64_t>& dims = arch.dims;
  const int i = grid_.coord("x"), j = grid_.coord("y"), k = Z() > 1 ? grid_.coord("z") : 0;
  GCNLAB_CHECK(g.n() >= static_cast<std::int64_t>(X()) * Z(), "{} vertices cannot fill the {} x {} row blocks of grid {}",
               g.n(), X(), Z(), grid_.shape());
  dims_ = dims;
  wcols_ = arch.weight_cols();
  averaged_.clear();
  for (int l = 0; l < arch.weight_layers(); ++l) averaged_.push_back(arch.averaged(l));
  asymmetric_ = !g.symmetric();

  // R_i and its Z sub-blocks R_{i,k'} (positions)
  const auto row_off = block_offsets(g.n(), X());
  const auto mine = sub_blocks(row_off, i);
  rows_i_ = row_off[i + 1] - row_off[i];
  rows_ik_ = mine[k + 1] - mine[k];
  sub_rows_.clear();
  for (int kk = 0; kk < Z(); ++kk) sub_rows_.push_back(mine[kk + 1] - mine[kk]);

  layouts_.clear();
  for (std::int64_t f : dims) {
    Layout lay;
    lay.vertices = g.vertices(mine[k], mine[k + 1]);
    std::tie(lay.col0, lay.cols) = features(f, j);
    layouts_.push_back(std::move(lay));
  }
  read_pieces(g, row_off[i], row_off[i + 1], plan_stages(row_off, j, k));
  allocate_scratch();
  if (arch.attends()) setup_attention(g, arch, row_off);
}

void SplitSummaStrategy::setup_attention(const Graph& g, const Architecture& arch,
                                         const std::vector<std::int64_t>& row_off) {
  // The ranks holding F_j, in rank order (i', k'), hold R_{0,0}, R_{0,1}, ... in turn.
  Communicator& same_features = Z() > 1 ? grid_.along({"x", "z"}) : col_;
  std::vector<std::int64_t> offsets{0};
  for (int ii = 0; ii < X(); ++ii) {
    const auto s = sub_blocks(row_off, ii);
    offsets.insert(offsets.end(), s.begin() + 1, s.end());
  }
  FeatureSplit split{&row_, {}, {}};
  for (std::size_t l = 1; l < layouts_.size(); ++l) {
    split.col0.push_back(layouts_[l].col0);
    split.cols.push_back(layouts_[l].cols);
  }
  const int me = same_features.rank();
  const std::int64_t r0 = offsets[me], r1 = offsets[me + 1];
  attention_ = GatheredAttention(backend_, ledger_, g, arch, g.block(Direction::forward, r0, r1, 0, g.n()), r0, 0,
                                 std::make_unique<AllGatherColumns>(same_features, offsets), elide_, std::move(split));
}

std::vector<Graph::ColumnRange> SplitSummaStrategy::plan_stages(const std::vector<std::int64_t>& row_off, int j,
                                                                 int k) {
  // Stages of layer k: the common refinement of the slab's split by rows i'
  // (owners of H) and by the Y column slices (owners of Âᵀ), cut to <= block_ vertices.
  std::vector<std::int64_t> piece_start(X() + 1, 0), piece_pos(X());
  for (int ii = 0; ii < X(); ++ii) {
    const auto s = sub_blocks(row_off, ii);
    piece_pos[ii] = s[k];
    piece_start[ii + 1] = piece_start[ii] + (s[k + 1] - s[k]);
  }
  const std::int64_t slab = piece_start[X()];
  const auto cut = block_offsets(slab, Y());
  stages_.clear();
  std::vector<Graph::ColumnRange> owned;  // graph positions of this rank's pieces, ascending
  int ii = 0, jj = 0;
  for (std::int64_t t = 0; t < slab;) {
    while (piece_start[ii + 1] <= t) ++ii;
    while (cut[jj + 1] <= t) ++jj;
    std::int64_t end = std::min(piece_start[ii + 1], cut[jj + 1]);
    if (block_ > 0) end = std::min(end, t + block_);
    Stage st;
    st.h_row0 = t - piece_start[ii];
    st.a_row0 = t - cut[jj];
    st.pos0 = piece_pos[ii] + st.h_row0;
    st.len = end - t;
    st.dense_root = ii;
    st.sparse_root = jj;
    if (jj == j) {
      st.owned = static_cast<int>(owned.size());
      owned.emplace_back(st.pos0, st.pos0 + st.len);
    }
    stages_.push_back(st);
    t = end;
  }
  return owned;
}

void SplitSummaStrategy::read_pieces(const Graph& g, std::int64_t r0, std::int64_t r1,
                                     const std::vector<Graph::ColumnRange>& owned) {
  // This rank reads only the pieces it owns (its column slice C_{j,k} of R_i);
  // the row learns the other pieces' nnz in one all-reduce (setup phase).
  pieces_fwd_.clear();
  pieces_bwd_.clear();
  auto read = [&](Direction d, std::vector<Csr>& pieces) {
    g.column_blocks(d, r0, r1, owned, [&](HostCsr b) { pieces.push_back(upload(backend_, b)); });
  };
  read(Direction::forward, pieces_fwd_);
  if (asymmetric_) read(Direction::backward, pieces_bwd_);
  nnz_local_ = 0;
  std::vector<std::int64_t> piece_nnz;  // forward and backward nnz per stage, 0 where not owned
  for (const Stage& st : stages_) {
    const bool mine = st.owned >= 0;
    const std::int64_t fwd = mine ? pieces_fwd_[st.owned].nnz : 0;
    piece_nnz.push_back(fwd);
    piece_nnz.push_back(mine && asymmetric_ ? pieces_bwd_[st.owned].nnz : fwd);
    nnz_local_ += fwd;
  }
  row_.allreduce(std::span<std::int64_t>(piece_nnz), ReduceOp::sum, Category::allreduce);
  for (std::size_t s = 0; s < stages_.size(); ++s)
    std::tie(stages_[s].nnz_fwd, stages_[s].nnz_bwd) = std::pair{piece_nnz[2 * s], piece_nnz[2 * s + 1]};
  stages_by_roots_.assign(static_cast<std::size_t>(X() * Y()), {});
  for (const Stage& st : stages_) stages_by_roots_[static_cast<std::size_t>(st.dense_root * Y() + st.sparse_root)].push_back(&st);
}

void SplitSummaStrategy::allocate_scratch() {
  const auto [max_nnz, max_len, fmax_j, fmax_any] = scratch_sizes();
  sparse_scratch_.rowptr = Buffer<std::int64_t>(backend_, static_cast<std::size_t>(rows_i_ + 1));
  sparse_scratch_.col = Buffer<std::int32_t>(backend_, static_cast<std::size_t>(max_nnz));
  sparse_scratch_.val = Buffer<float>(backend_, static_cast<std::size_t>(max_nnz));
  dense_scratch_ = Buffer<float>(backend_, static_cast<std::size_t>(std::max(max_len * fmax_j, rows_ik_ * fmax_any)));
  if (Z() > 1) partial_ = Buffer<float>(backend_, static_cast<std::size_t>(rows_i_ * fmax_j));
  if (dw_reduce_ == DwReduce::summa) {
    const DwSizes d = dw_sizes();
    auto buffer = [&](std::int64_t n) { return Buffer<float>(backend_, static_cast<std::size_t>(n)); };
    xt_ = buffer(d.cslice * d.phi);
    xt_send_ = buffer(d.send);
    xt_recv_ = buffer(d.cslice * d.phi);
    xt_piece_ = buffer(max_len * d.phi);
    dw_block_ = buffer(d.block);
    if (Z() > 1) dw_kept_ = buffer(d.kept);
    dw_gathered_ = buffer(d.gathered);
  }
}

SplitSummaStrategy::DwSizes SplitSummaStrategy::dw_sizes() const {
  const int i = grid_.coord("x"), j = grid_.coord("y"), k = Z() > 1 ? grid_.coord("z") : 0;
  DwSizes d;
  for (const Stage& st : stages_)
    if (st.owned >= 0) d.cslice += st.len;
  for (std::size_t l = 0; l + 1 < dims_.size(); ++l) {
    const std::int64_t phi = weight_rows(dims_[l], i).second, gj = weight_features(static_cast<int>(l), j).second;
    d.phi = std::max(d.phi, phi);
    d.send = std::max(d.send, rows_ik_ * features(dims_[l], j).second);
    d.block = std::max(d.block, phi * gj);
    d.kept = std::max(d.kept, fiber_rows(dims_[l], i, k).second * gj);
    d.gathered = std::max(d.gathered, dims_[l] * dims_[l + 1] * averaged_[l]);
  }
  return d;
}

SplitSummaStrategy::ScratchSizes SplitSummaStrategy::scratch_sizes() const {
  // The largest received sparse piece, dense piece and column block.
  ScratchSizes s;
  for (const Stage& st : stages_) {
    s.max_len = std::max(s.max_len, st.len);
    if (st.owned < 0) s.max_nnz = std::max({s.max_nnz, st.nnz_fwd, st.nnz_bwd});
  }
  for (std::int64_t f : dims_)
    for (int jp = 0; jp < Y(); ++jp) {
      s.fmax_any = std::max(s.fmax_any, features(f, jp).second);
      if (jp == grid_.coord("y")) s.fmax_j = std::max(s.fmax_j, features(f, jp).second);
    }
  for (int l = 0; l + 1 < static_cast<int>(dims_.size()); ++l)  // Z's column blocks (linear_backward, dW's SUMMA)
    for (int jp = 0; jp < Y(); ++jp) {
      s.fmax_any = std::max(s.fmax_any, weight_features(l, jp).second);
      if (jp == grid_.coord("y")) s.fmax_j = std::max(s.fmax_j, weight_features(l, jp).second);
    }
  return s;
}

MemoryNeed SplitSummaStrategy::memory_need() const {
  // The owned pieces of Âᵀ[R_i, C_{j,k}] (and Â); a received piece with a full
  // row-offset array (the broadcast layout); the dense piece or column block;
  // the partial sums over R_i (Z > 1) and the local product T.
  MemoryNeed m;
  for (const auto* pieces : {&pieces_fwd_, &pieces_bwd_})
    for (const Csr& a : *pieces) m.graph += csr_bytes(a);
  const auto [max_nnz, max_len, fmax_j, fmax_any] = scratch_sizes();
  m.buffers = bytes_of<std::int64_t>(rows_i_ + 1) + bytes_of<float>(max_nnz) + bytes_of<std::int32_t>(max_nnz) +
              bytes_of<float>(std::max(max_len * fmax_j, rows_ik_ * fmax_any)) +
              bytes_of<float>((Z() > 1 ? rows_i_ : 0) * fmax_j);
  if (dw_reduce_ == DwReduce::summa) {  // Xᵀ, its send/receive buffers and piece; dW block, slice, all of dW
    const DwSizes d = dw_sizes();
    m.buffers += bytes_of<float>(2 * d.cslice * d.phi + d.send + max_len * d.phi + d.block +
                                 (Z() > 1 ? d.kept : 0) + d.gathered);
  }
  m.buffers += attention_.bytes();
  return m;
}

std::string SplitSummaStrategy::layout_description() const {
  std::int64_t cols = 0;
  for (const Stage& st : stages_)
    if (st.owned >= 0) cols += st.len;
  return fmt::format("rank {} = ({}) holds {} activation rows and an Âᵀ block of {} x {} (nnz {}), root of {} of {} SUMMA stages",
                     world_.rank(), fmt::join(grid_.coords(), ", "), rows_ik_, rows_i_, cols, nnz_local_,
                     pieces_fwd_.size(), stages_.size());
}

std::string SplitSummaStrategy::variant_description() const {
  return fmt::format("dW {}, softmax {}",
                     dw_reduce_ == DwReduce::summa ? "by dense SUMMA + all-gather (CAGNET Eq. 4)"
                                                   : "by one all-reduce over all ranks (--dw-reduce allreduce)",
                     softmax_ == SoftmaxComm::gather_rows ? "by all-gathering the logits' rows (CAGNET Eq. 2)"
                                                          : "by all-reducing row max and sum (--softmax allreduce)");
}

ClassSplit SplitSummaStrategy::class_split() {
  ClassSplit c{&row_, softmax_, {}};
  const std::int64_t classes = dims_.back();
  for (int j = 0; j < Y(); ++j) c.offsets.push_back(features(classes, j).first);
  c.offsets.push_back(classes);
  return c;
}

void SplitSummaStrategy::spmm(bool backward, ConstView h, View t) {
  const int i = grid_.coord("x");
  const std::int64_t f = t.cols;
  GCNLAB_ASSERT(t.ld == f && h.ld == h.cols && h.cols == f);
  View target = Z() > 1 ? View{partial_.data(), rows_i_, f, f} : t;
  if (stages_.empty()) {
    auto s = ledger_.time(Category::spmm);
    backend_.fill(target, 0.f);
  }
  for (std::size_t s = 0; s < stages_.size(); ++s) {
    const Stage& st = stages_[s];
    // Âᵀ[R_i, piece] (or Â) along the process row
    Csr* a = &sparse_scratch_;
    if (st.owned >= 0) {
      a = backward && asymmetric_ ? &pieces_bwd_[st.owned] : &pieces_fwd_[st.owned];
    } else {
      a->rows = rows_i_;
      a->cols = st.len;
      a->nnz = backward ? st.nnz_bwd : st.nnz_fwd;
    }
    row_.broadcast(std::span<std::int64_t>(a->rowptr.data(), rows_i_ + 1), st.sparse_root, Category::bcast_sparse);
    row_.broadcast(std::span<std::int32_t>(a->col.data(), a->nnz), st.sparse_root, Category::bcast_sparse);
    row_.broadcast(std::span<float>(a->val.data(), a->nnz), st.sparse_root, Category::bcast_sparse);
    // H[piece, F_j] along the process column; the owner sends its rows in place
    ConstView m{dense_scratch_.data(), st.len, f, f};
    if (st.dense_root == i) m = ConstView{h.data + st.h_row0 * f, st.len, f, f};
    col_.broadcast(std::span<float>(const_cast<float*>(m.data), st.len * f), st.dense_root, Category::bcast_dense);
    auto timer = ledger_.time(Category::spmm);
    backend_.spmm(*a, m, target, s == 0 ? 0.f : 1.f);
  }
  if (Z() > 1) {
    std::vector<std::int64_t> counts;
    for (std::int64_t r : sub_rows_) counts.push_back(r * f);
    fiber_->reduce_scatter(std::span<const float>(partial_.data(), rows_i_ * f), std::span<float>(t.data, rows_ik_ * f),
                           std::span<const std::int64_t>(counts), Category::reduce_scatter);
  }
}

void SplitSummaStrategy::for_each_column_block(ConstView local, const ColumnBlocks& blocks,
                                               const std::function<void(int, ConstView)>& fn) {
  const int j = grid_.coord("y");
  for (int jp = 0; jp < Y(); ++jp) {
    const std::int64_t cols = blocks(jp).second;
    ConstView blk = jp == j ? local : ConstView{dense_scratch_.data(), rows_ik_, cols, cols};
    if (Y() > 1)
      row_.broadcast(std::span<float>(const_cast<float*>(blk.data), rows_ik_ * cols), jp, Category::bcast_dense);
    fn(jp, blk);
  }
}

void SplitSummaStrategy::aggregate(int, Direction d, ConstView in, View out) {
  spmm(d == Direction::backward, in, out);
}

void SplitSummaStrategy::linear(int l, ConstView t, ConstView w, View z) {
  const auto [co0, cout] = weight_features(l, grid_.coord("y"));
  {
    auto s = ledger_.time(Category::gemm);
    backend_.fill(z, 0.f);
  }
  for_each_column_block(t, columns_of(dims_[l]), [&](int jp, ConstView blk) {
    const std::int64_t r0 = features(dims_[l], jp).first;
    auto s = ledger_.time(Category::gemm);
    backend_.gemm(Op::N, Op::N, 1.f, blk, ConstView{w.data + r0 * w.ld + co0, blk.cols, cout, w.ld}, 1.f, z);
  });
}

void SplitSummaStrategy::linear_backward(int l, ConstView x, ConstView u, ConstView w, View dw, View* dx) {
  const auto [ci0, cin] = features(dims_[l], grid_.coord("y"));
  const bool summa = dw_reduce_ == DwReduce::summa;
  if (dx || !summa) {  // the partial SUMMA with Wᵀ (dX), and the allreduce variant's dW rows
    {
      auto s = ledger_.time(Category::gemm);
      if (!summa) backend_.fill(dw, 0.f);
      if (dx) backend_.fill(*dx, 0.f);
    }
    for_each_column_block(u, weight_columns(l), [&](int jp, ConstView blk) {
      const std::int64_t c0 = weight_features(l, jp).first;
      auto s = ledger_.time(Category::gemm);
      if (!summa) backend_.gemm(Op::T, Op::N, 1.f, x, blk, 1.f, View{dw.data + ci0 * dw.ld + c0, cin, blk.cols, dw.ld});
      if (dx) backend_.gemm(Op::N, Op::T, 1.f, blk, ConstView{w.data + ci0 * w.ld + c0, cin, blk.cols, w.ld}, 1.f, *dx);
    });
  }
  if (summa) weight_gradient_summa(l, x, u, dw);
  else world_.allreduce(std::span<float>(dw.data, dw.size()), ReduceOp::sum, Category::allreduce);
}

void SplitSummaStrategy::transpose_input(int l, ConstView x) {
  // Rank (i, j, k) holds X[R_{i,k}, F_j] and needs Xᵀ[Φ_i, C_{j,k}]: from every
  // (i', j', k) of its layer the rows of the stages (i', j) — its own column
  // slice's pieces inside R_{i',k} — restricted to the columns F_j' ∩ Φ_i.
  // (A square 2D grid makes this CAGNET's pairwise transpose: (i, j) <-> (j, i).)
  const int i = grid_.coord("x"), j = grid_.coord("y"), k = Z() > 1 ? grid_.coord("z") : 0;
  const std::int64_t f = dims_[l];
  const auto fj = features(f, j), phi = weight_rows(f, i);
  auto peer = [&](int ip, int jp) {  // split-3d's grid has a z axis even when Z = 1
    return grid_.rank_of(grid_.ndims() > 2 ? std::vector<int>{ip, jp, k} : std::vector<int>{ip, jp});
  };
  std::vector<Message<const float>> sends;
  std::vector<Message<float>> recvs;
  const float* self = nullptr;  // this rank's message to itself stays in the send buffer
  {
    auto s = ledger_.time(Category::pack);
    float* out = xt_send_.data();
    for (int ip = 0; ip < X(); ++ip)
      for (int jp = 0; jp < Y(); ++jp) {  // to (ip, jp): my rows of its stages, columns F_j ∩ Φ_ip
        const auto cols = overlap(fj, weight_rows(f, ip));
        const float* start = out;
        for (const Stage* st : stages_between(i, jp)) {
          if (cols.second == 0) break;
          backend_.copy(ConstView{x.data + st->h_row0 * x.ld + (cols.first - fj.first), st->len, cols.second, x.ld},
                        View{out, st->len, cols.second, cols.second});
          out += st->len * cols.second;
        }
        if (out == start) continue;
        if (ip == i && jp == j) self = start;
        else sends.push_back({peer(ip, jp), start, static_cast<std::size_t>(out - start)});
      }
  }
  float* in = xt_recv_.data();
  std::vector<const float*> from(static_cast<std::size_t>(X() * Y()), nullptr);
  for (int ip = 0; ip < X(); ++ip)
    for (int jp = 0; jp < Y(); ++jp) {
      const auto cols = overlap(features(f, jp), phi);
      std::int64_t count = 0;
      for (const Stage* st : stages_between(ip, j)) count += st->len * cols.second;
      if (count == 0) continue;
      from[ip * Y() + jp] = ip == i && jp == j ? self : in;
      if (ip != i || jp != j) recvs.push_back({peer(ip, jp), in, static_cast<std::size_t>(count)}), in += count;
    }
  world_.exchange(sends, recvs, Category::p2p);
  auto s = ledger_.time(Category::pack);
  for (int ip = 0; ip < X(); ++ip)
    for (int jp = 0; jp < Y(); ++jp) {
      const float* msg = from[ip * Y() + jp];
      if (!msg) continue;
      const auto cols = overlap(features(f, jp), phi);
      for (const Stage* st : stages_between(ip, j)) {
        backend_.copy(ConstView{msg, st->len, cols.second, cols.second},
                      View{xt_.data() + st->a_row0 * phi.second + (cols.first - phi.first), st->len, cols.second,
                           phi.second});
        msg += st->len * cols.second;
      }
    }
}

void SplitSummaStrategy::weight_gradient_summa(int l, ConstView x, ConstView u, View dw) {
  const int i = grid_.coord("x"), j = grid_.coord("y"), k = Z() > 1 ? grid_.coord("z") : 0;
  const std::int64_t fin = dims_[l], fout = wcols_[l];
  const std::int64_t phi = weight_rows(fin, i).second, gj = weight_features(l, j).second;
  transpose_input(l, x);
  // dW^(k)[Φ_i, G_j] = Σ_stages Xᵀ[Φ_i, piece] U[piece, G_j] (Xᵀ stored as |C_{j,k}| x |Φ_i|)
  View block{dw_block_.data(), phi, gj, gj};
  {
    auto s = ledger_.time(Category::gemm);
    backend_.fill(block, 0.f);
  }
  for (const Stage& st : stages_) {
    float* a = st.sparse_root == j ? xt_.data() + st.a_row0 * phi : xt_piece_.data();
    row_.broadcast(std::span<float>(a, st.len * phi), st.sparse_root, Category::bcast_dense);
    float* b = st.dense_root == i ? const_cast<float*>(u.data) + st.h_row0 * gj : dense_scratch_.data();
    col_.broadcast(std::span<float>(b, st.len * gj), st.dense_root, Category::bcast_dense);
    auto s = ledger_.time(Category::gemm);
    backend_.gemm(Op::T, Op::N, 1.f, ConstView{a, st.len, phi, phi}, ConstView{b, st.len, gj, gj}, 1.f, block);
  }
  // Z > 1: the fiber's partial sums, reduce-scattered by rows of Φ_i
  const float* kept = dw_block_.data();
  if (Z() > 1) {
    std::vector<std::int64_t> counts;
    for (int kk = 0; kk < Z(); ++kk) counts.push_back(fiber_rows(fin, i, kk).second * gj);
    fiber_->reduce_scatter(std::span<const float>(dw_block_.data(), phi * gj),
                           std::span<float>(dw_kept_.data(), counts[k]), std::span<const std::int64_t>(counts),
                           Category::reduce_scatter);
    kept = dw_kept_.data();
  }
  // every rank's block, all-gathered in rank order, then placed into dW
  std::vector<std::int64_t> counts;
  for (int r = 0; r < world_.size(); ++r) {
    const auto c = grid_.coords_of(r);
    counts.push_back(fiber_rows(fin, c[0], Z() > 1 ? c[2] : 0).second * weight_features(l, c[1]).second);
  }
  world_.allgather(std::span<const float>(kept, counts[world_.rank()]),
                   std::span<float>(dw_gathered_.data(), fin * fout), std::span<const std::int64_t>(counts),
                   Category::allgather);
  auto s = ledger_.time(Category::pack);
  const float* blk = dw_gathered_.data();
  for (int r = 0; r < world_.size(); ++r) {
    const auto c = grid_.coords_of(r);
    const auto [kept0, rows] = fiber_rows(fin, c[0], Z() > 1 ? c[2] : 0);
    const auto [col0, cols] = weight_features(l, c[1]);
    const std::int64_t row0 = weight_rows(fin, c[0]).first + kept0;
    backend_.copy(ConstView{blk, rows, cols, cols}, View{dw.data + row0 * dw.ld + col0, rows, cols, dw.ld});
    blk += counts[r];
  }
}

double SplitSummaStrategy::column_block_bytes(const ColumnBlocks& blocks) const {
  const int j = grid_.coord("y");
  double bytes = 0;
  if (Y() == 1) return 0;
  for (int jp = 0; jp < Y(); ++jp)
    bytes += wire::broadcast(static_cast<double>(rows_ik_) * blocks(jp).second * sizeof(float), jp == j);
  return bytes;
}

void SplitSummaStrategy::add_summa_dw_bytes(int l, ByteModel& m) const {
  // The wire bytes of weight_gradient_summa for layer l.
  const int i = grid_.coord("x"), j = grid_.coord("y"), k = Z() > 1 ? grid_.coord("z") : 0;
  const std::int64_t fin = dims_[l], fout = wcols_[l];
  const double phi = static_cast<double>(weight_rows(fin, i).second), gj = static_cast<double>(weight_features(l, j).second);
  for (const Stage& st : stages_) {
    double pieces = 0;  // Xᵀ pieces from the other ranks of the layer
    for (int jp = 0; jp < Y() && st.sparse_root == j; ++jp)
      if (st.dense_root != i || jp != j)
        pieces += st.len * static_cast<double>(overlap(features(fin, jp), weight_rows(fin, i)).second) * sizeof(float);
    m.add(Category::p2p, world_, pieces);
    m.add(Category::bcast_dense, row_, wire::broadcast(st.len * phi * sizeof(float), st.sparse_root == j));
    m.add(Category::bcast_dense, col_, wire::broadcast(st.len * gj * sizeof(float), st.dense_root == i));
  }
  if (Z() > 1) m.add(Category::reduce_scatter, *fiber_, wire::reduce_scatter(fiber_rows(fin, i, k).second * gj * sizeof(float), Z()));
  // every block but this rank's
  m.add(Category::allgather, world_, (static_cast<double>(fin * fout) - fiber_rows(fin, i, k).second * gj) * sizeof(float));
}

void SplitSummaStrategy::aggregate_bytes(int, Direction d, std::int64_t cols, ByteModel& m) const {
  // the SUMMA stages: sparse pieces along y, dense blocks (this rank's F_j: `cols`) along x;
  // then the fiber's reduce-scatter of the partial sums
  const int i = grid_.coord("x"), j = grid_.coord("y");
  const double fj = static_cast<double>(cols);
  for (const Stage& st : stages_) {
    const double nnz = static_cast<double>(d == Direction::backward ? st.nnz_bwd : st.nnz_fwd);
    m.add(Category::bcast_sparse, row_, wire::broadcast((rows_i_ + 1) * 8.0 + nnz * (4 + 4), st.sparse_root == j));
    m.add(Category::bcast_dense, col_, wire::broadcast(st.len * fj * sizeof(float), st.dense_root == i));
  }
  if (Z() > 1) m.add(Category::reduce_scatter, *fiber_, wire::reduce_scatter(rows_ik_ * fj * sizeof(float), Z()));
}

void SplitSummaStrategy::linear_bytes(int l, ByteModel& m) const {
  m.add(Category::bcast_dense, row_, column_block_bytes(columns_of(dims_[l])));  // the partial SUMMA
}

void SplitSummaStrategy::linear_backward_bytes(int l, bool dx, ByteModel& m) const {
  // the partial SUMMA with Wᵀ: for dX, and for the allreduce variant's dW rows
  if (dx || dw_reduce_ == DwReduce::allreduce) m.add(Category::bcast_dense, row_, column_block_bytes(weight_columns(l)));
  if (dw_reduce_ == DwReduce::allreduce)
    m.add(Category::allreduce, world_,
          wire::allreduce(static_cast<double>(dims_[l]) * wcols_[l] * sizeof(float), world_.size()));
  else
    add_summa_dw_bytes(l, m);
}

// H[R_{i,k}, F_j]: the other rows of F_j are on P(:, j, k) and along the fiber
void SplitSummaStrategy::sum_over_rows(int, View per_column) {
  sum_columns_over(col_, per_column);
  if (fiber_) sum_columns_over(*fiber_, per_column);
}

void SplitSummaStrategy::sum_over_rows_bytes(int, std::int64_t count, ByteModel& m) const {
  sum_columns_over_bytes(col_, count, m);
  if (fiber_) sum_columns_over_bytes(*fiber_, count, m);
}

}  // namespace gcnlab

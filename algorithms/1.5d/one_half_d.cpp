#include "algorithms/1.5d/one_half_d.hpp"

#include <algorithm>

#include "common/comm/wire.hpp"
#include "common/dist/block_rows.hpp"
#include "common/dist/column_sums.hpp"
#include "common/core/blocks.hpp"
#include "common/data/graph.hpp"

namespace gcnlab {

OneHalfDStrategy::OneHalfDStrategy(const StrategyOptions& opts, const StrategyContext& ctx)
    : grid_(ctx.world, replicated_grid(opts, ctx.world.size()), {"r", "c"}),
      row_(grid_.along({"c"})),
      col_(grid_.along({"r"})),
      backend_(ctx.backend),
      ledger_(ctx.world.ledger()) {
  order_spec_ = opts.order;
  elide_ = opts.on_off_option("elide");
}

std::string OneHalfDStrategy::describe() const {
  const int R = grid_.dim("r"), c = grid_.dim("c");
  const auto [k0, k1] = stage_range(R, c, grid_.coord("c"));
  return fmt::format(
      "1.5d (CAGNET Alg. 2): grid {} (R = {} block rows, replication c = {}); Âᵀ{} and activations in block rows "
      "of {}..{} rows, W replicated; rank {} = P({}, {}) holds block row {} (nnz {}) and runs stages {}..{}",
      grid_.shape(), R, c, asymmetric_ ? " and Â" : "", block_extent(offsets_).first, block_extent(offsets_).second,
      grid_.world().rank(), grid_.coord("r"), grid_.coord("c"), grid_.coord("r"), nnz_local_, k0, k1 - 1);
}

void OneHalfDStrategy::setup(const Graph& g, const Architecture& arch) {
  const std::vector<std::int64_t>& dims = arch.dims;
  const int R = grid_.dim("r"), c = grid_.dim("c"), i = grid_.coord("r"), j = grid_.coord("c");
  dims_ = dims;
  wcols_ = arch.weight_cols();
  orders_ = parse_orders(order_spec_, dims);
  asymmetric_ = !g.symmetric();
  GCNLAB_CHECK(g.n() >= R, "1.5d: {} vertices cannot be split into {} non-empty block rows", g.n(), R);
  offsets_ = row_blocks(g, R);
  const std::int64_t r0 = offsets_[i], r1 = offsets_[i + 1];

  layouts_ = block_row_layouts(g, r0, r1, dims);

  // Only the blocks of this column's stages are stored: Âᵀ_ik, k in chunk j; the
  // root of stage k is the process of row k in this column (rank k of P(:, j)).
  const auto [k0, k1] = stage_range(R, c, j);
  stages_ = block_row_stages(backend_, g, offsets_, r0, r1, k0, k1);
  nnz_local_ = stages_.nnz;
  const std::int64_t fmax = *std::max_element(dims.begin(), dims.end());
  stage_ = Buffer<float>(backend_, static_cast<std::size_t>(block_extent(offsets_).second * fmax));
  if (arch.attends())
    attention_ = GatheredAttention(
        backend_, ledger_, g, arch, g.block(Direction::forward, r0, r1, offsets_[k0], offsets_[k1]), r0, offsets_[k0],
        std::make_unique<ChunkColumns>(backend_, row_, col_, offsets_, k0, k1), elide_);
}

void OneHalfDStrategy::aggregate(int, Direction d, ConstView in, View out) {
  broadcast_spmm(col_, backend_, d == Direction::forward ? stages_.forward : stages_.backward, in, out, stage_);
  row_.allreduce(std::span<float>(out.data, out.size()), ReduceOp::sum, Category::allreduce);
}

void OneHalfDStrategy::linear(int, ConstView x, ConstView w, View z) { multiply_weights(backend_, ledger_, x, w, z); }

void OneHalfDStrategy::linear_backward(int, ConstView x, ConstView g, ConstView w, View dw, View* dx) {
  weight_and_input_gradients(backend_, ledger_, col_, x, g, w, dw, dx);
}

MemoryNeed OneHalfDStrategy::memory_need() const {
  MemoryNeed m = broadcast_spmm_memory(stages_, offsets_, dims_);
  m.buffers += attention_.bytes();
  return m;
}

void OneHalfDStrategy::aggregate_bytes(int, Direction d, std::int64_t cols, ByteModel& m) const {
  const double rows = static_cast<double>(layouts_[0].vertices.size());
  m.add(Category::bcast_dense, col_,
        broadcast_spmm_bytes(col_, d == Direction::forward ? stages_.forward : stages_.backward, cols));
  m.add(Category::allreduce, row_, wire::allreduce(rows * static_cast<double>(cols) * sizeof(float), grid_.dim("c")));
}

void OneHalfDStrategy::linear_backward_bytes(int l, bool, ByteModel& m) const {
  m.add(Category::allreduce, col_, weight_gradient_bytes(dims_[l], wcols_[l], grid_.dim("r")));
}

void OneHalfDStrategy::sum_over_rows(int, View per_column) {
  sum_columns_over(col_, per_column);  // P(:, j) holds each block row once
}

void OneHalfDStrategy::sum_over_rows_bytes(int, std::int64_t count, ByteModel& m) const {
  sum_columns_over_bytes(col_, count, m);
}

// --- ChunkColumns

ChunkColumns::ChunkColumns(Backend& backend, Communicator& row, Communicator& col,
                           const std::vector<std::int64_t>& offsets, int k0, int k1)
    : ChunkExchange(backend, row, col, offsets, k0, k1, position_range(offsets[k0], offsets[k1])) {}

void ChunkColumns::gather(ConstView local, View all) {
  const std::int64_t w = local.cols;
  const int i = block_row();
  GCNLAB_ASSERT(local.ld == w && all.ld == w && local.rows == rows_of(i));
  for (int k = k0_; k < k1_; ++k) {  // stage k: block row k broadcast from P(k, j)
    float* block = all.data + (offsets_[k] - offsets_[k0_]) * w;
    if (k == i) {
      auto t = col_->ledger().time(Category::pack);
      backend_->copy(local, View{block, local.rows, w, w});
    }
    col_->broadcast(std::span<float>(block, static_cast<std::size_t>(rows_of(k) * w)), k, Category::bcast_dense);
  }
}

void ChunkColumns::scatter_sum(View partial, View local) {
  const std::int64_t w = local.cols;
  const int i = block_row();
  GCNLAB_ASSERT(partial.ld == w && local.ld == w && local.rows == rows_of(i) && partial.rows == columns());
  std::vector<std::int64_t> counts(static_cast<std::size_t>(col_->size()), 0);  // a reduce to each stage's root
  for (int k = k0_; k < k1_; ++k) counts[static_cast<std::size_t>(k)] = rows_of(k) * w;
  col_->reduce_scatter(std::span<const float>(partial.data, static_cast<std::size_t>(partial.size())),
                       std::span<float>(local.data, static_cast<std::size_t>(counts[static_cast<std::size_t>(i)])),
                       std::span<const std::int64_t>(counts), Category::reduce_scatter);
  share_along_row(local);
}

void ChunkColumns::gather_bytes(std::int64_t width, ByteModel& m) const {
  double rows = 0;
  for (int k = k0_; k < k1_; ++k)
    if (k != block_row()) rows += static_cast<double>(rows_of(k));
  m.add(Category::bcast_dense, *col_, rows * width * sizeof(float));
}

void ChunkColumns::scatter_sum_bytes(std::int64_t width, ByteModel& m) const {
  const int i = block_row();
  if (in_chunk(i))
    m.add(Category::reduce_scatter, *col_,
          wire::reduce_scatter(static_cast<double>(rows_of(i)) * width * sizeof(float), col_->size()));
  share_along_row_bytes(width, m);
}

}  // namespace gcnlab

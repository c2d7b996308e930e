#include "algorithms/1d/one_d.hpp"

#include <algorithm>

#include "common/dist/block_rows.hpp"
#include "common/dist/column_sums.hpp"
#include "common/core/blocks.hpp"
#include "common/data/graph.hpp"

namespace gcnlab {

OneDStrategy::OneDStrategy(const StrategyOptions& opts, const StrategyContext& ctx)
    : world_(ctx.world), backend_(ctx.backend), ledger_(ctx.world.ledger()) {
  algo_ = opts.algo;
  order_spec_ = opts.order;
  elide_ = opts.on_off_option("elide");
  GCNLAB_CHECK(opts.grid.empty() || (opts.grid.size() == 1 && opts.grid[0] == world_.size()),
               "--algo {} needs --grid P with P = {} (the number of ranks)", opts.algo, world_.size());
}

std::string OneDStrategy::describe() const { return "1d (CAGNET Alg. 1): " + layout_summary(); }

std::string OneDStrategy::layout_summary() const {
  return fmt::format("{} ranks, Âᵀ{} and activations in block rows of {}..{} rows, W replicated; rank {} holds {} "
                     "rows, nnz {}",
                     world_.size(), asymmetric_ ? " and Â" : "", block_extent(offsets_).first,
                     block_extent(offsets_).second, world_.rank(), layouts_[0].vertices.size(), nnz_local_);
}

void OneDStrategy::setup(const Graph& g, const Architecture& arch) {
  const std::vector<std::int64_t>& dims = arch.dims;
  const int p = world_.size(), me = world_.rank();
  dims_ = dims;
  wcols_ = arch.weight_cols();
  orders_ = parse_orders(order_spec_, dims);
  asymmetric_ = !g.symmetric();
  offsets_ = row_blocks(g, p);
  GCNLAB_CHECK(g.n() >= p, "{}: {} vertices cannot be split into {} non-empty block rows", algo_, g.n(), p);
  const std::int64_t r0 = offsets_[me], r1 = offsets_[me + 1];

  layouts_ = block_row_layouts(g, r0, r1, dims);

  stages_ = block_row_stages(backend_, g, offsets_, r0, r1, 0, p);
  nnz_local_ = stages_.nnz;
  if (arch.attends())
    attention_ = GatheredAttention(backend_, ledger_, g, arch, g.block(Direction::forward, r0, r1, 0, g.n()), r0, 0,
                                   attention_exchange(GatheredAttention::widest(arch)), elide_);

  const std::int64_t fmax = *std::max_element(dims.begin(), dims.end());
  stage_ = Buffer<float>(backend_, static_cast<std::size_t>(block_extent(offsets_).second * fmax));
}

void OneDStrategy::row_spmm(const std::vector<BroadcastStage>& stages, ConstView in, View out) {
  broadcast_spmm(world_, backend_, stages, in, out, stage_);
}

std::unique_ptr<ColumnExchange> OneDStrategy::attention_exchange(std::int64_t) {
  return std::make_unique<AllGatherColumns>(world_, offsets_);
}

void OneDStrategy::aggregate(int, Direction d, ConstView in, View out) {
  row_spmm(d == Direction::forward ? stages_.forward : stages_.backward, in, out);
}

void OneDStrategy::linear(int, ConstView x, ConstView w, View z) { multiply_weights(backend_, ledger_, x, w, z); }

void OneDStrategy::linear_backward(int, ConstView x, ConstView g, ConstView w, View dw, View* dx) {
  weight_and_input_gradients(backend_, ledger_, world_, x, g, w, dw, dx);
}

MemoryNeed OneDStrategy::memory_need() const {
  MemoryNeed m = broadcast_spmm_memory(stages_, offsets_, dims_);
  m.buffers += attention_.bytes();
  return m;
}

void OneDStrategy::aggregate_bytes(int, Direction d, std::int64_t cols, ByteModel& m) const {
  m.add(Category::bcast_dense, world_,
        broadcast_spmm_bytes(world_, d == Direction::forward ? stages_.forward : stages_.backward, cols));
}

void OneDStrategy::linear_backward_bytes(int l, bool, ByteModel& m) const {
  m.add(Category::allreduce, world_, weight_gradient_bytes(dims_[l], wcols_[l], world_.size()));
}

void OneDStrategy::sum_over_rows(int, View per_column) {
  sum_columns_over(world_, per_column);  // every rank holds one block row
}

void OneDStrategy::sum_over_rows_bytes(int, std::int64_t count, ByteModel& m) const {
  sum_columns_over_bytes(world_, count, m);
}

}  // namespace gcnlab

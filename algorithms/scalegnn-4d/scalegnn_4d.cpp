#include "algorithms/scalegnn-4d/scalegnn_4d.hpp"

#include <fmt/format.h>

#include "common/comm/wire.hpp"

namespace gcnlab {

namespace {

// D and the options of the 3D PMM inside each group.
std::pair<int, StrategyOptions> split_options(const StrategyOptions& opts, int p) {
  GCNLAB_CHECK(opts.batch_size > 0,
               "--algo scalegnn-4d trains on mini-batches: give --batch-size B (B = the vertex count: the whole graph)");
  const std::string& permutation = opts.option("permutation");
  GCNLAB_CHECK(permutation.empty() || permutation == "none",
               "--algo scalegnn-4d samples vertices in one ordering (ScaleGNN Alg. 2): --permutation must be none "
               "(got {})", permutation);
  GCNLAB_CHECK(!opts.learn_features, "--algo scalegnn-4d does not train the input features");
  StrategyOptions pmm = opts;
  pmm.options["permutation"] = "none";
  int d = 1;
  if (!opts.grid.empty()) {
    GCNLAB_CHECK(opts.grid.size() == 4, "--algo scalegnn-4d needs --grid DxXxYxZ (got {})", format_grid(opts.grid));
    d = opts.grid[0];
    pmm.grid.assign(opts.grid.begin() + 1, opts.grid.end());
    GCNLAB_CHECK(d * pmm.grid[0] * pmm.grid[1] * pmm.grid[2] == p, "grid {} has {} processes but the job has {} ranks",
                 format_grid(opts.grid), d * pmm.grid[0] * pmm.grid[1] * pmm.grid[2], p);
  }
  return {d, pmm};
}

}  // namespace

ScaleGnn4DStrategy::ScaleGnn4DStrategy(const StrategyOptions& opts, const StrategyContext& ctx)
    : ScaleGnn4DStrategy(split_options(opts, ctx.world.size()), ctx) {}

ScaleGnn4DStrategy::ScaleGnn4DStrategy(const std::pair<int, StrategyOptions>& split, const StrategyContext& ctx)
    : d_(split.first),
      grid_(ctx.world, {d_, ctx.world.size() / d_}, {"d", "pmm"}),
      pmm_(std::make_unique<Plexus3DStrategy>(split.second, StrategyContext{grid_.along({"pmm"}), ctx.backend})) {}

std::string ScaleGnn4DStrategy::describe() const {
  return fmt::format("scalegnn-4d (ScaleGNN Sec. IV): {} data-parallel group(s), each a 3D PMM of {}", d_,
                     pmm_->describe());
}

std::vector<int> ScaleGnn4DStrategy::grid() const {
  std::vector<int> g{d_};
  for (int x : pmm_->grid()) g.push_back(x);
  return g;
}

std::vector<int> ScaleGnn4DStrategy::coords() const {
  std::vector<int> k{grid_.coord("d")};
  for (int x : pmm_->coords()) k.push_back(x);
  return k;
}

void ScaleGnn4DStrategy::setup(const Graph& g, const Architecture& arch) {
  dims_ = arch.dims;
  sampled_ = false;
  pmm_->setup(g, arch);
}

void ScaleGnn4DStrategy::restrict_to(const SampleCut* c) {
  sampled_ = c != nullptr;
  pmm_->restrict_to(c);
}

void ScaleGnn4DStrategy::linear_backward(int l, ConstView x, ConstView g, ConstView w, View dw, View* dx) {
  pmm_->linear_backward(l, x, g, w, dw, dx);
  // Sec. IV-A: the groups' gradients of the step's loss add up.
  if (d_ > 1 && sampled_)
    data_group().allreduce(std::span<float>(dw.data, static_cast<std::size_t>(dw.size())), ReduceOp::sum,
                           Category::allreduce);
}

void ScaleGnn4DStrategy::sum_over_rows(int l, View per_column) {
  pmm_->sum_over_rows(l, per_column);
  if (d_ > 1 && sampled_) data_group().allreduce(row_span(per_column), ReduceOp::sum, Category::allreduce);  // dL/dγ as dW
}

bool ScaleGnn4DStrategy::first_copy(int l) const {
  return pmm_->first_copy(l) && (sampled_ || grid_.coord("d") == 0);  // as counts_metrics, on any layer
}

bool ScaleGnn4DStrategy::counts_metrics() const {
  // training steps: every group's sample; evaluation: the full graph once
  return pmm_->counts_metrics() && (sampled_ || grid_.coord("d") == 0);
}

void ScaleGnn4DStrategy::linear_backward_bytes(int l, bool dx, ByteModel& m) const {
  pmm_->linear_backward_bytes(l, dx, m);
  if (d_ > 1 && sampled_) {
    const Block b = pmm_->weight_block(l);
    m.add(Category::allreduce, data_group(), wire::allreduce(bytes_of<float>(b.rows * b.cols), d_));
  }
}

void ScaleGnn4DStrategy::sum_over_rows_bytes(int l, std::int64_t count, ByteModel& m) const {
  pmm_->sum_over_rows_bytes(l, count, m);
  if (d_ > 1 && sampled_)  // γ: layout(l)'s columns
    m.add(Category::allreduce, data_group(), wire::allreduce(bytes_of<float>(pmm_->layout(l).cols), d_));
}

}  // namespace gcnlab

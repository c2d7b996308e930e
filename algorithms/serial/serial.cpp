#include "algorithms/serial/serial.hpp"

#include <algorithm>

#include "common/dist/block_rows.hpp"

namespace gcnlab {

SerialStrategy::SerialStrategy(const StrategyOptions& opts, const StrategyContext& ctx)
    : backend_(ctx.backend),
      ledger_(ctx.world.ledger()),
      keep_host_(opts.batch_size > 0),
      dp_groups_(opts.dp_groups) {
  GCNLAB_CHECK(dp_groups_ >= 1 && (dp_groups_ == 1 || keep_host_),
               "--dp-groups D (the serial oracle of scalegnn-4d's D data-parallel groups) needs --batch-size");
  order_spec_ = opts.order;
  GCNLAB_CHECK(ctx.world.size() == 1, "--algo serial runs on one rank (the job has {})", ctx.world.size());
  GCNLAB_CHECK(opts.grid.empty() || opts.grid == std::vector<int>{1},
               "--algo serial takes no --grid other than 1");
}

std::string SerialStrategy::describe() const {
  return fmt::format("serial: one rank holds Âᵀ ({} x {}, nnz {}){} and all activations", n_, n_,
                     a_hat_t_.nnz, asymmetric_ ? " and Â" : "");
}

void SerialStrategy::setup(const Graph& g, const Architecture& arch) {
  const std::vector<std::int64_t>& dims = arch.dims;
  dims_ = dims;
  wcols_ = arch.weight_cols();
  orders_ = parse_orders(order_spec_, dims);
  n_ = g.n();
  asymmetric_ = !g.symmetric();
  Layout all;
  all.vertices = g.vertices(0, n_);
  layouts_.clear();
  for (std::int64_t f : dims) {
    all.cols = f;
    layouts_.push_back(all);
  }
  HostCsr t = g.block(Direction::forward, 0, n_, 0, n_);
  a_hat_t_ = upload(backend_, t);
  attention_ = arch.attends() ? RowAttention(backend_, ledger_, arch, a_hat_t_, t, all.vertices, all.vertices)
                              : RowAttention();
  if (keep_host_) host_t_ = std::move(t);
  if (asymmetric_) {
    HostCsr a = g.block(Direction::backward, 0, n_, 0, n_);
    a_hat_ = upload(backend_, a);
    if (keep_host_) host_ = std::move(a);
  }
  sampled_ = false;
}

namespace {

struct SerialCut final : SampleCut {
  std::vector<Layout> layouts;
  HostCsr a_t, a;  // Âᵀ_S and (unless Â = Âᵀ) Â_S
};

}  // namespace

std::unique_ptr<SampleCut> SerialStrategy::cut(Sample s) const {
  GCNLAB_CHECK(keep_host_, "serial was set up without mini-batches");
  auto c = std::make_unique<SerialCut>();
  // the step's sample of every data-parallel group (s is group 0's), one after the other
  std::vector<Sample> samples{s};
  for (int group = 1; group < dp_groups_; ++group)
    samples.push_back(uniform_sample(s.n, s.size(), s.seed, s.step, group));
  std::vector<std::int64_t> vertices;
  std::vector<HostCsr> a_t, a;
  for (const Sample& g : samples) {
    for (const std::int64_t q : g.positions) vertices.push_back(layouts_[0].vertices[q]);
    a_t.push_back(induced_block(host_t_, 0, 0, g.positions, g.positions, g.inclusion));
    if (asymmetric_) a.push_back(induced_block(host_, 0, 0, g.positions, g.positions, g.inclusion));
  }
  for (const Layout& full : layouts_) c->layouts.push_back({vertices, full.col0, full.cols});
  c->a_t = block_diagonal(a_t);
  if (asymmetric_) c->a = block_diagonal(a);
  c->sample = std::move(s);
  return c;
}

void SerialStrategy::restrict_to(const SampleCut* c) {
  sampled_ = c != nullptr;
  if (!c) return;
  const auto& cut = dynamic_cast<const SerialCut&>(*c);
  sample_layouts_ = cut.layouts;
  sample_t_ = upload(backend_, cut.a_t);
  if (asymmetric_) sample_ = upload(backend_, cut.a);
}

MemoryNeed SerialStrategy::memory_need() const {
  MemoryNeed m;
  m.graph = csr_bytes(a_hat_t_) + (asymmetric_ ? csr_bytes(a_hat_) : 0.0) + csr_bytes(sample_t_) + csr_bytes(sample_);
  m.buffers = attention_.bytes();
  return m;
}

const Csr& SerialStrategy::operand(Direction d) const {
  const Csr& a_t = sampled_ ? sample_t_ : a_hat_t_;
  const Csr& a = sampled_ ? sample_ : a_hat_;
  return d == Direction::forward || !asymmetric_ ? a_t : a;  // Graph::symmetric: Â = Âᵀ
}

void SerialStrategy::aggregate(int, Direction d, ConstView in, View out) {
  auto s = ledger_.time(Category::spmm);
  backend_.spmm(operand(d), in, out, 0.f);
}

void SerialStrategy::aggregate_plus(int, Direction d, ConstView in, const RowTerm& t, View out) {
  auto s = ledger_.time(Category::spmm);
  backend_.spmm_plus(operand(d), in, t, out);
}

void SerialStrategy::linear(int, ConstView x, ConstView w, View z) {
  auto s = ledger_.time(Category::gemm);
  backend_.gemm(Op::N, Op::N, 1.f, x, w, 0.f, z);
}

void SerialStrategy::linear_backward(int, ConstView x, ConstView g, ConstView w, View dw, View* dx) {
  auto s = ledger_.time(Category::gemm);
  backend_.gemm(Op::T, Op::N, 1.f, x, g, 0.f, dw);
  if (dx) backend_.gemm(Op::N, Op::T, 1.f, g, w, 0.f, *dx);
}

void SerialStrategy::reshard(int, int, ConstView x, View y, bool accumulate) {
  auto t = ledger_.time(Category::elementwise);
  if (accumulate) backend_.axpy(1.f, x, y);
  else backend_.copy(x, y);
}

}  // namespace gcnlab

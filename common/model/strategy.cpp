#include "common/model/strategy.hpp"

#include "common/comm/wire.hpp"
#include "common/core/error.hpp"

namespace gcnlab {

std::string to_string(ProductOrder o) { return o == ProductOrder::transform_first ? "transform" : "aggregate"; }

std::string to_string(ActivationPlan p) { return p == ActivationPlan::shared ? "shared" : "per-layer"; }

Layout aggregated_layout(const Strategy& s, int l) {
  return {s.layout(l + 1).vertices, s.layout(l).col0, s.layout(l).cols};
}

ew::HeadSplit head_split(const Architecture& a, int l, std::int64_t out_col0) {
  const int H = a.heads_of(l), m = a.averaged(l);
  if (m > 1) return {out_col0 * m, a.dims[static_cast<std::size_t>(l + 1)], m};
  return {out_col0, a.dims[static_cast<std::size_t>(l + 1)] / H, 0};
}

Layout transformed_layout(const Strategy& s, const Architecture& a, int l) {
  const Layout& out = s.layout(l + 1);
  const int m = a.averaged(l);  // averaged heads: every head of the output's columns (class-major)
  return {s.layout(l).vertices, out.col0 * m, out.cols * m};
}

std::unique_ptr<SampleCut> Strategy::cut(Sample) const {
  throw Error("this strategy trains on the full graph only (mini-batches: serial, scalegnn-4d)");
}

void Strategy::restrict_to(const SampleCut*) {
  throw Error("this strategy trains on the full graph only (mini-batches: serial, scalegnn-4d)");
}

namespace {
[[noreturn]] void no_scalegnn_model() {
  fail("internal: this strategy provides no norm-block collectives (StrategyCaps::norm_blocks; make_strategy refuses "
       "a model that demands them)");
}
[[noreturn]] void no_align() {
  fail("internal: this strategy keeps a layer's rows on other ranks than its input's and provides no align "
       "(Architecture::self_term)");
}

[[noreturn]] void no_attention() {
  fail("internal: this strategy lays out no attention edge tensors (StrategyCaps::attention; make_strategy refuses "
       "a model that attends)");
}
}  // namespace

void Strategy::attention(int l, const Attention& a) {
  if (!edge_attention()) no_attention();
  edge_attention()->forward(l, a);
}
void Strategy::aggregate_attention(int l, ConstView z, View out) {
  if (!edge_attention()) no_attention();
  edge_attention()->aggregate(l, z, out);
}
void Strategy::attention_backward(int l, const Attention& a, ConstView g, ConstView z, View dz, View ds, View dd) {
  if (!edge_attention()) no_attention();
  edge_attention()->backward(l, a, g, z, dz, ds, dd);
}
void Strategy::attention_bytes(int l, ByteModel& m) const {
  if (!edge_attention()) no_attention();
  edge_attention()->forward_bytes(l, m);
}
void Strategy::aggregate_attention_bytes(int l, std::int64_t cols, ByteModel& m) const {
  if (!edge_attention()) no_attention();
  edge_attention()->aggregate_bytes(l, cols, m);
}
void Strategy::attention_backward_bytes(int l, ByteModel& m) const {
  if (!edge_attention()) no_attention();
  edge_attention()->backward_bytes(l, m);
}

void Strategy::sum_over_columns(int, std::span<float>) { no_scalegnn_model(); }
void Strategy::sum_over_rows(int, View) { no_scalegnn_model(); }
void Strategy::reshard(int, int, ConstView, View, bool) { no_scalegnn_model(); }
void Strategy::align(int, Direction, ConstView, View) { no_align(); }
void Strategy::align_bytes(int, Direction, ByteModel&) const { no_align(); }

void Strategy::linear_add(int, ConstView x, ConstView w, View z) {
  GCNLAB_CHECK(ctx_ && local_linear(), "internal: linear_add on a strategy without local linear maps");
  auto timer = ctx_->world.ledger().time(Category::gemm);
  ctx_->backend.gemm(Op::N, Op::N, 1.f, x, w, 1.f, z);
}

void Strategy::linear_backward_add(int l, ConstView x, ConstView g, ConstView w, View dw, View dx) {
  GCNLAB_CHECK(ctx_ && local_linear(), "internal: linear_backward_add on a strategy without local linear maps");
  linear_backward(l, x, g, w, dw, nullptr);  // dW, reduced as the strategy reduces it
  auto timer = ctx_->world.ledger().time(Category::gemm);
  ctx_->backend.gemm(Op::N, Op::T, 1.f, g, w, 1.f, dx);
}

void Strategy::aggregate_plus(int l, Direction d, ConstView in, const RowTerm& t, View out) {
  GCNLAB_CHECK(ctx_, "internal: a strategy made outside make_strategy has no backend for aggregate_plus");
  aggregate(l, d, in, out);
  auto timer = ctx_->world.ledger().time(Category::elementwise);
  ctx_->backend.add_term(t, out);
}

void Strategy::sum_over_layout(int l, View values) {
  GCNLAB_CHECK(ctx_, "internal: a strategy made outside make_strategy has no world for sum_over_layout");
  GCNLAB_ASSERT(values.rows == 1 && values.ld == values.cols);
  if (!first_copy(l)) ctx_->backend.fill(values, 0.f);
  if (ctx_->world.size() > 1)
    ctx_->world.allreduce(std::span<float>(values.data, static_cast<std::size_t>(values.cols)), ReduceOp::sum,
                          Category::allreduce);
}

void Strategy::sum_over_layout_bytes(int, std::int64_t count, ByteModel& m) const {
  GCNLAB_CHECK(ctx_, "internal: a strategy made outside make_strategy has no world for sum_over_layout");
  const Communicator& world = ctx_->world;
  if (world.size() > 1)
    m.add(Category::allreduce, world, wire::allreduce(static_cast<double>(count) * sizeof(float), world.size()));
}

void Strategy::linear_bytes(int, ByteModel&) const {}
void Strategy::sum_over_columns_bytes(int, ByteModel&) const {}
void Strategy::sum_over_rows_bytes(int, std::int64_t, ByteModel&) const {}
void Strategy::reshard_bytes(int, int, ByteModel&) const {}

const std::string& StrategyOptions::option(const std::string& name) const {
  const auto it = options.find(name);
  GCNLAB_CHECK(it != options.end(), "internal: strategy option --{} read by --algo {} but not registered", name, algo);
  return it->second;
}

std::int64_t StrategyOptions::integer_option(const std::string& name) const {
  const std::string& text = option(name);
  std::size_t used = 0;
  std::int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  GCNLAB_CHECK(used == text.size() && !text.empty(), "--{} takes an integer (got '{}')", name, text);
  return v;
}

std::vector<ProductOrder> parse_orders(const std::string& spec, const std::vector<std::int64_t>& dims) {
  const std::size_t layers = dims.empty() ? 0 : dims.size() - 1;
  std::vector<ProductOrder> out;
  if (spec == "auto") {
    for (std::size_t l = 0; l < layers; ++l)
      out.push_back(dims[l + 1] < dims[l] ? ProductOrder::transform_first : ProductOrder::aggregate_first);
    return out;
  }
  std::vector<std::string> items;
  for (std::size_t at = 0;;) {
    const std::size_t comma = spec.find(',', at);
    items.push_back(spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  for (const std::string& item : items) {
    GCNLAB_CHECK(item == "aggregate" || item == "transform",
                 "--order takes auto, aggregate, transform or one of them per layer, comma-separated (got '{}')", spec);
    out.push_back(item == "transform" ? ProductOrder::transform_first : ProductOrder::aggregate_first);
  }
  if (dims.empty()) return out;
  if (out.size() == 1) out.assign(layers, out.front());
  GCNLAB_CHECK(out.size() == layers, "--order '{}' names {} layers, the model has {}", spec, out.size(), layers);
  return out;
}

}  // namespace gcnlab

#include "models/gat/gat.hpp"

#include <fmt/format.h>

#include "common/core/error.hpp"
#include "common/core/rng.hpp"

namespace gcnlab {

namespace {

// LayerBuffers::own of every layer
enum Own { kZ, kDz, kSrc, kDst, kDs, kDd, kOwn };

std::string src_name(int l) { return fmt::format("att_src{}", l); }
std::string dst_name(int l) { return fmt::format("att_dst{}", l); }

// The heads of layer l and which of Z's columns on this rank (transformed_layout(l)'s) each belongs to.
ew::HeadSplit head_split(const Pass& p, int l) { return gcnlab::head_split(p.arch, l, p.strategy.layout(l + 1).col0); }

Attention attention_of(const Pass& p, int l) {
  const LayerBuffers& s = p.buf.layers[l];
  Attention a{s.own[kSrc], s.own[kDst]};
  if (p.training && p.config.attention_dropout > 0)
    a.dropout = {p.config.seed,
                 rng::stream(rng::Stream::attention_dropout, static_cast<std::uint64_t>(p.epoch),
                             static_cast<std::uint64_t>(l)),
                 p.config.attention_dropout};
  return a;
}

}  // namespace

Architecture GatModel::architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) const {
  std::vector<std::int64_t> dims = LayerStack::widths(c, features, classes);
  if (c.concat)
    for (std::size_t l = 1; l + 1 < dims.size(); ++l) dims[l] *= c.heads;  // concatenated heads
  Architecture a = convolutions(dims, "gat");
  a.values = EdgeValues::sum;  // the pattern (A + I) is what it reads; its values are the attention's
  a.heads.assign(dims.size() - 1, c.heads);
  a.heads.back() = c.output_heads;
  a.head_mean.assign(dims.size() - 1, !c.concat);
  a.head_mean.back() = true;  // the output layer averages its heads (PyG's GAT models: concat=False)
  a.attention_dropout = c.attention_dropout > 0;
  return a;
}

std::vector<ParameterSpec> GatModel::parameters(const ModelConfig& c, const Architecture& a) const {
  std::vector<ParameterSpec> out = Model::parameters(c, a);  // W<l>
  const int L = a.weight_layers();
  for (int l = 0; l < L; ++l) {
    for (const int side : {0, 1}) {
      ParameterSpec att;
      att.name = side == 0 ? src_name(l) : dst_name(l);
      att.layer = l;
      att.placement = ParameterSpec::Placement::transformed;  // Z's columns (class-major where averaged)
      att.stream = (1 + side) * L + l;                         // Glorot draws of their own
      att.fan_in = a.heads_of(l);
      att.fan_out = a.transformed(l) / a.heads_of(l);
      out.push_back(att);
    }
    out.push_back(bias(l));
  }
  return out;
}

void GatModel::bind_layer(ActivationSlots& slots, const BufferPlan& p, int l, LayerBuffers& s) const {
  const Strategy& st = *p.strategy;
  const Layout z = transformed_layout(st, p.arch, l);
  const std::int64_t rows = rows_of(z);
  const int H = p.arch.heads_of(l);
  const auto matrix = [&](std::int64_t r, std::int64_t c) { return View{slots.take(r * c), r, c, c}; };
  s.own.assign(kOwn, View{});
  s.own[kZ] = slots.take(z);
  s.own[kDz] = slots.take(z);
  for (const Own k : {kSrc, kDst, kDs, kDd}) s.own[k] = matrix(rows, H);
}

void GatModel::layer_forward(const Pass& p, int l, ConstView x) const {
  LayerBuffers& s = p.buf.layers[l];
  const View z = s.own[kZ];
  p.primitives.linear(l, x, p.buf.params[l].value, z);
  p.elementwise([&](Backend& b) {  // s_j = a_src · Z_j, d_j = a_dst · Z_j per head: this rank's columns' share
    b.head_dots(z, p.buf.param(src_name(l)).value.data(), p.buf.param(dst_name(l)).value.data(), head_split(p, l),
                s.own[kSrc], s.own[kDst]);
  });
  p.primitives.attention(l, attention_of(p, l));
  p.primitives.aggregate_attention(l, z, s.z);  // the stack adds b (biased)
}

void GatModel::layer_backward(const Pass& p, int l, ConstView x, View* dx) const {
  LayerBuffers& s = p.buf.layers[l];
  const View z = s.own[kZ], dz = s.own[kDz], ds = s.own[kDs], dd = s.own[kDd];
  p.primitives.attention_backward(l, attention_of(p, l), s.g, z, dz, ds, dd);  // dz = βᵀ G
  Parameter& src = p.buf.param(src_name(l));
  Parameter& dst = p.buf.param(dst_name(l));
  p.elementwise([&](Backend& b) {  // dz += ds a_srcᵀ + dd a_dstᵀ per head; da_src[c] = Σ_j ds_j,head(c) Z_j[c], da_dst
    b.head_dots_backward(ds, dd, src.value.data(), dst.value.data(), head_split(p, l), z, dz, src.grad.data(),
                         dst.grad.data());
  });
  p.primitives.sum_over_rows(l + 1, src.grad);
  p.primitives.sum_over_rows(l + 1, dst.grad);
  Parameter& w = p.buf.params[l];
  p.primitives.linear_backward(l, x, dz, w.value, w.grad, dx);
}

}  // namespace gcnlab

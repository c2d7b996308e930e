#include "common/model/parameters.hpp"

#include <fmt/format.h>

#include "common/model/strategy.hpp"

namespace gcnlab {

ParameterSpec layer_weight(int l) {
  ParameterSpec p;
  p.name = fmt::format("W{}", l);
  p.layer = p.stream = l;
  return p;
}

std::pair<std::int64_t, std::int64_t> global_shape(const ParameterSpec& p, const Architecture& a) {
  const auto l = static_cast<std::size_t>(p.layer);
  switch (p.placement) {
    case ParameterSpec::Placement::weight: return {a.dims[l], a.transformed(p.layer)};
    case ParameterSpec::Placement::columns: return {1, a.dims[l + 1]};
    case ParameterSpec::Placement::transformed: return {1, a.transformed(p.layer)};
    case ParameterSpec::Placement::scalar: break;
  }
  return {1, 1};
}

Block block_of(const ParameterSpec& p, const Strategy& s, const Architecture& a) {
  if (p.placement == ParameterSpec::Placement::weight) return s.weight_block(p.layer);
  if (p.placement == ParameterSpec::Placement::scalar) return {0, 1, 0, 1};
  if (p.placement == ParameterSpec::Placement::transformed) {
    const Layout z = transformed_layout(s, a, p.layer);
    return {0, 1, z.col0, z.cols};
  }
  const Layout& out = s.layout(p.layer + 1);  // the columns of the layer's output
  return {0, 1, out.col0, out.cols};
}

}  // namespace gcnlab

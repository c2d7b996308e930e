#include "common/model/model.hpp"

#include "common/model/convolution.hpp"

namespace gcnlab {

DropoutParams Pass::dropout(int l) const {
  return {config.seed, rng::stream(rng::Stream::dropout, static_cast<std::uint64_t>(epoch), static_cast<std::uint64_t>(l)),
          config.dropout};
}

void Pass::layer_forward(int l, ConstView x) const {
  LayerBuffers& s = buf.layers[l];
  if (!arch.conv(l)) primitives.linear(l, x, s.w, s.z);  // ScaleGNN Eq. 4, 11
  else convolution_forward(primitives, l, orders[l], x, s.w, s.z, s.conv);
}

void Pass::layer_backward(int l, ConstView x, View* dx) const {
  LayerBuffers& s = buf.layers[l];
  if (!arch.conv(l)) primitives.linear_backward(l, x, s.g, s.w, s.dw, dx);  // Eq. 13-14, 18-19
  else convolution_backward(primitives, l, backward_orders[l], x, s.g, s.w, s.dw, dx, s.conv);
}

}  // namespace gcnlab

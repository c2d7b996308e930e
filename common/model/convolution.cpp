#include "common/model/convolution.hpp"

namespace gcnlab {

BackwardOrder convolution_backward_order(const Strategy& s, int l, ProductOrder forward, bool input_gradient) {
  const bool transform_first = s.backward_order(l) == BackwardOrder::transform_first ||
                               (forward == ProductOrder::aggregate_first && !input_gradient &&
                                s.activation_plan() != ActivationPlan::shared);
  return transform_first ? BackwardOrder::transform_first : BackwardOrder::aggregate_first;
}

void convolution_forward(Primitives& s, int l, ProductOrder order, ConstView x, ConstView w, View z,
                         const ConvolutionScratch& scratch) {
  if (order == ProductOrder::aggregate_first) {
    s.aggregate(l, Direction::forward, x, scratch.t);
    s.linear(l, scratch.t, w, z);
  } else {
    s.linear(l, x, w, scratch.y);
    s.aggregate(l, Direction::forward, scratch.y, z);
  }
}

void convolution_backward(Primitives& s, int l, BackwardOrder order, ConstView x, ConstView g, ConstView w, View dw,
                          View* dx, const ConvolutionScratch& scratch) {
  if (order == BackwardOrder::aggregate_first) {
    s.aggregate(l, Direction::backward, g, scratch.y);  // G is not read after this (dX may share its storage)
    s.linear_backward(l, x, scratch.y, w, dw, dx);
    return;
  }
  View dt = scratch.dt;
  s.linear_backward(l, scratch.t, g, w, dw, dx ? &dt : nullptr);
  if (dx) s.aggregate(l, Direction::backward, dt, *dx);
}

}  // namespace gcnlab

#pragma once
// The graph convolution Z = Âᵀ X W (Kipf & Welling, ICLR'17 Eq. 2; CAGNET
// Eq. 1), written once against a strategy's primitives (strategy.hpp): every
// strategy computes the same sequence of aggregations and linear maps, and
// differs only in how each one moves its operands.
//
//   forward, ProductOrder::aggregate_first   T = aggregate(X),   Z = linear(T, W)
//            ProductOrder::transform_first   Y = linear(X, W),   Z = aggregate(Y)
//   backward, BackwardOrder::aggregate_first U = aggregate_bwd(G) = Â G,
//                                            dW, dX = linear_backward(X, U)
//                                            (CAGNET Eq. 2-3)
//             BackwardOrder::transform_first dW, dT = linear_backward(T, G),
//                                            dX = aggregate_bwd(dT) = Â dT
//                                            (Plexus Alg. 2; T kept from the forward)
//
// Both backward orders compute dW = (ÂᵀX)ᵀ G and dX = Â G Wᵀ; they round
// differently and move different widths (f_{l+1} against f_l). The model
// chooses (convolution_backward_order): transform-first where the strategy's
// layouts need it (Strategy::backward_order: plexus-3d, scalegnn-4d), and
// where a layer aggregated first and needs no dX — layer 0 with fixed input
// features, whose dW_0 = T_0ᵀ G_0 takes the forward's T_0 and needs no SpMM
// and no communication for one (what autograd does for (ÂᵀX)W), except under
// MG-GCN's shared activation plan, which keeps no buffer across layers (it
// recomputes instead, as it does dropout's input); aggregate-first elsewhere.

#include "common/model/strategy.hpp"

namespace gcnlab {

// A convolution's intermediate products (ModelBuffers lays them out).
struct ConvolutionScratch {
  View t;   // T_l = Âᵀ X_l, aggregated_layout(l); kept for the backward under BackwardOrder::transform_first
  View dt;  // dT_l = G_l W_lᵀ, aggregated_layout(l)
  View y;   // X_l W_l (transform first) or U_l = Â G_l, transformed_layout(l)
};

BackwardOrder convolution_backward_order(const Strategy& s, int l, ProductOrder forward, bool input_gradient);

void convolution_forward(Primitives& s, int l, ProductOrder order, ConstView x, ConstView w, View z,
                         const ConvolutionScratch& scratch);

// dW (the rank's complete block) and, unless dx is null, dX. x is the forward's
// input (read under BackwardOrder::aggregate_first only).
void convolution_backward(Primitives& s, int l, BackwardOrder order, ConstView x, ConstView g, ConstView w, View dw,
                          View* dx, const ConvolutionScratch& scratch);

}  // namespace gcnlab

#pragma once
// The graph convolutional network (Kipf & Welling, ICLR'17; CAGNET Eq. 1-3),
// --model gcn: L graph convolutions on Â = D^-1/2 (A + I) D^-1/2 with ReLU
// and dropout between them (common/model/layer_stack.hpp), f_0 -> hidden ...
// -> classes: Z_l = Âᵀ X_l W_l (common/model/convolution.hpp).

#include "common/model/layer_stack.hpp"

namespace gcnlab {

class GcnModel final : public LayerStack {
 public:
  Architecture architecture(const ModelConfig& c, std::int64_t features, std::int64_t classes) const override {
    return convolutions(widths(c, features, classes), "gcn");
  }
};

}  // namespace gcnlab

#pragma once
// The model variants (--model). Both are GCNs on Â = D^-1/2 (A + I) D^-1/2:
//
//   gcn       Kipf & Welling: L graph convolutions, ReLU (and dropout on each
//             layer's input) between them; f_0 -> hidden ... -> classes.
//   scalegnn  ScaleGNN's model (Wei et al., 2026, Sec. III-A/B, Fig. 2):
//               X_h,0 = X_in W_in                                   (Eq. 4, linear)
//               X_h,l = dropout(ReLU(RMSNorm(Âᵀ X_h,l-1 W_l))) + X_h,l-1   (Eq. 5-10, l = 1..L)
//               O     = X_h,L W_out                                 (Eq. 11, linear)
//             with RMSNorm(x) = γ ⊙ x / sqrt(mean(x²) + ε) per row and a
//             learned scale γ per layer (Eq. 7, 29); --layers is L, so the
//             model has L + 2 weight matrices, all but the first hidden-wide.
//
// A strategy sees a model as its weight layers, each a graph convolution or a
// linear layer; under scalegnn each convolution is followed by the RMSNorm
// and residual collectives the strategy provides (Strategy::sum_over_columns,
// sum_over_rows, reshard).

#include <cstdint>
#include <string>
#include <vector>

namespace gcnlab {

enum class ModelVariant { gcn, scalegnn };
ModelVariant parse_model_variant(const std::string& s);
std::string to_string(ModelVariant v);

enum class LayerKind {
  conv,    // Z = Âᵀ X W
  linear,  // Z = X W (ScaleGNN's input projection and output head)
};

// The kind of each of the `weight_layers` weight layers of a variant.
std::vector<LayerKind> layer_kinds(ModelVariant v, int weight_layers);

// Whether weight layer l's output goes through RMSNorm, ReLU, dropout and the
// residual add (scalegnn's graph convolutions).
inline bool is_norm_block(ModelVariant v, const std::vector<LayerKind>& kinds, std::size_t l) {
  return v == ModelVariant::scalegnn && kinds[l] == LayerKind::conv;
}

}  // namespace gcnlab

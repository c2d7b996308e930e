#pragma once
// A model's parameters, by name (Model::parameters). Each is a global matrix
// that every rank holds a block of, placed by the strategy's layouts of the
// weight layer it belongs to:
//   weight   W of weight layer l, f_l x f_{l+1} (x the heads it averages:
//            Architecture::transformed): the strategy's weight_block(l)
//            (the block its linear() and linear_backward() compute with)
//   columns  a row vector over weight layer l's output columns, 1 x f_{l+1}
//            (RMSNorm's scale γ, a bias): layout(l+1)'s columns on every rank
//            that holds them
//   transformed  a row vector over the columns of Z_l = X_l W_l, 1 x
//            Architecture::transformed(l) (GAT's attention vectors):
//            transformed_layout(l)'s columns
//   scalar   one value (GIN's learned ε), 1 x 1, the same on every rank: its
//            gradient is summed over the whole layout it is computed on
//            (Primitives::sum_over_layout), so every rank's update is the same
// The Trainer initialises, decays, optimises, gathers, scatters and
// checkpoints every parameter the same way; the model reads and writes its
// values and gradients in its passes (ModelBuffers::params).

#include <cstdint>
#include <string>
#include <utility>

#include "common/model/architecture.hpp"
#include "common/model/init.hpp"

namespace gcnlab {

class Strategy;

struct ParameterSpec {
  enum class Placement { weight, columns, transformed, scalar };
  enum class Init { glorot, ones, zeros, constant };
  std::string name;  // unique in the model: its weights file <name>.npy (--weights-in, --weights-out)
  int layer = 0;     // the weight layer whose layouts place it
  Placement placement = Placement::weight;
  Init init = Init::glorot;  // glorot: drawn per global element from stream (seed, `stream`) (init.hpp)
  int stream = 0;
  float constant = 0;  // Init::constant's value
  // Glorot's fans where they are not the global shape's (0: rows and columns):
  // GAT's attention vectors are drawn as PyG's (1, H, C) tensors, fans H and C.
  std::int64_t fan_in = 0, fan_out = 0;
  bool decay = true;  // --weight-decay applies (--weight-decay-layers first: layer 0's only)
};

// The weight of layer l: Glorot-initialised from stream l, decayed.
ParameterSpec layer_weight(int l);

// Its global shape (rows, columns) in the model of architecture `a`.
std::pair<std::int64_t, std::int64_t> global_shape(const ParameterSpec& p, const Architecture& a);
// This rank's block of it (after Strategy::setup, on the current layouts).
Block block_of(const ParameterSpec& p, const Strategy& s, const Architecture& a);

}  // namespace gcnlab

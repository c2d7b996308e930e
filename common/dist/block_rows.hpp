#pragma once
// Pieces shared by the block-row strategies (1d, 1.5d, sa-1d, sa-1.5d): their
// aggregate() gives a rank the complete product T_i = Âᵀ_i X (or U_i = Â_i G)
// of its block row; the linear maps are local except the weight-gradient
// reduction (CAGNET Sec. IV-A.3/4):
//   Z_i  = T_i W
//   dW   = ALLREDUCE(X_iᵀ U_i) over one copy of every block row
//   dX_i = U_i Wᵀ

#include <vector>

#include "common/model/strategy.hpp"

namespace gcnlab {

// Every activation matrix's layout for a rank holding positions [r0, r1), all columns.
std::vector<Layout> block_row_layouts(const Graph& g, std::int64_t r0, std::int64_t r1,
                                      const std::vector<std::int64_t>& dims);

// The linear map of a block-row strategy (its linear()): Z_i = T_i W, local.
void multiply_weights(Backend& backend, Ledger& ledger, ConstView t, ConstView w, View z);

// Its backward (linear_backward()): dW = ALLREDUCE(X_iᵀ G_i) over `group`, which
// holds exactly one rank per block row, and dX_i = G_i Wᵀ.
void weight_and_input_gradients(Backend& backend, Ledger& ledger, Communicator& group, ConstView x, ConstView u,
                                ConstView w, View dw, View* dx);

// Wire bytes of one f_in x f_out dW all-reduction over a group of `group_size`.
double weight_gradient_bytes(std::int64_t f_in, std::int64_t f_out, int group_size);

}  // namespace gcnlab

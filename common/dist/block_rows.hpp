#pragma once
// Pieces shared by the block-row strategies (1d, 1.5d, sa-1d, sa-1.5d): once a
// rank holds the complete product T_i = Âᵀ_i X (or U_i = Â_i G) for its block
// row, the rest of a layer is local except the weight-gradient reduction
// (CAGNET Sec. IV-A.3/4):
//   Z_i  = T_i W
//   dW   = ALLREDUCE(X_iᵀ U_i) over one copy of every block row
//   dX_i = U_i Wᵀ

#include <functional>
#include <vector>

#include "common/model/strategy.hpp"

namespace gcnlab {

// Every activation matrix's layout for a rank holding positions [r0, r1), all columns.
std::vector<Layout> block_row_layouts(const Graph& g, std::int64_t r0, std::int64_t r1,
                                      const std::vector<std::int64_t>& dims);

void multiply_weights(Backend& backend, Ledger& ledger, ConstView t, ConstView w, View z);

// A layer's forward product Z_i = Âᵀ_i X W in either order, given the
// strategy's distributed SpMM out = Âᵀ_i in (row-local output, any width):
//   aggregate first  T = spmm(X) (width f_l) in `work`, Z = T W
//   transform first  Y = X W (width f_{l+1}) in `work`, Z = spmm(Y)
// `work` holds rows x max(f_l, f_{l+1}) floats.
using RowSpmm = std::function<void(ConstView in, View out)>;
void forward_product(Backend& backend, Ledger& ledger, ProductOrder order, const RowSpmm& spmm, ConstView x,
                     ConstView w, View z, float* work);

// `group` holds exactly one rank per block row.
void weight_and_input_gradients(Backend& backend, Ledger& ledger, Communicator& group, ConstView x, ConstView u,
                                ConstView w, View dw, View* dx);

// Wire bytes of the dW all-reductions of one epoch over `group`.
double weight_gradient_bytes(const std::vector<std::int64_t>& dims, int group_size);

}  // namespace gcnlab

#include "common/dist/block_rows.hpp"

#include "common/comm/wire.hpp"

namespace gcnlab {

std::vector<Layout> block_row_layouts(const Graph& g, std::int64_t r0, std::int64_t r1,
                                      const std::vector<std::int64_t>& dims) {
  Layout mine;
  mine.vertices = g.vertices(r0, r1);
  std::vector<Layout> layouts;
  for (std::int64_t f : dims) {
    mine.cols = f;
    layouts.push_back(mine);
  }
  return layouts;
}

void multiply_weights(Backend& backend, Ledger& ledger, ConstView t, ConstView w, View z) {
  auto s = ledger.time(Category::gemm);
  backend.gemm(Op::N, Op::N, 1.f, t, w, 0.f, z);
}

void weight_and_input_gradients(Backend& backend, Ledger& ledger, Communicator& group, ConstView x, ConstView u,
                                ConstView w, View dw, View* dx) {
  {
    auto s = ledger.time(Category::gemm);
    backend.gemm(Op::T, Op::N, 1.f, x, u, 0.f, dw);
  }
  GCNLAB_ASSERT(dw.ld == dw.cols);
  group.allreduce(std::span<float>(dw.data, dw.size()), ReduceOp::sum, Category::allreduce);
  if (dx) {
    auto s = ledger.time(Category::gemm);
    backend.gemm(Op::N, Op::T, 1.f, u, w, 0.f, *dx);
  }
}

double weight_gradient_bytes(std::int64_t f_in, std::int64_t f_out, int group_size) {
  return wire::allreduce(static_cast<double>(f_in) * f_out * sizeof(float), group_size);
}

}  // namespace gcnlab

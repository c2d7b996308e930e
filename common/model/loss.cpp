#include "common/model/loss.hpp"

#include "common/comm/wire.hpp"

namespace gcnlab {

XentSums softmax_cross_entropy(Backend& backend, Ledger& ledger, Communicator* class_group, ConstView z,
                               std::int64_t col0, const std::int32_t* labels,
                               const std::uint8_t* split, double n_train, LossWorkspace& ws, View g) {
  const auto rows = static_cast<std::size_t>(z.rows);
  if (ws.max.size() != rows) {
    ws.max = Buffer<float>(backend, rows);
    ws.sum = Buffer<float>(backend, rows);
  }
  const bool split_classes = class_group && class_group->size() > 1;
  if (!split_classes) {  // whole rows local: max, sum and gradient in one pass per row
    auto s = ledger.time(Category::loss);
    return backend.softmax_xent(z, col0, nullptr, nullptr, labels, split, static_cast<float>(1.0 / n_train), g);
  }
  {
    auto s = ledger.time(Category::loss);
    backend.row_max(z, ws.max.data());
  }
  class_group->allreduce(ws.max.span(), ReduceOp::max, Category::allreduce);
  {
    auto s = ledger.time(Category::loss);
    backend.row_sum_exp(z, ws.max.data(), ws.sum.data());
  }
  class_group->allreduce(ws.sum.span(), ReduceOp::sum, Category::allreduce);
  auto s = ledger.time(Category::loss);
  return backend.softmax_xent(z, col0, ws.max.data(), ws.sum.data(), labels, split,
                              static_cast<float>(1.0 / n_train), g);
}

double softmax_cross_entropy_bytes(const Communicator* class_group, std::int64_t rows) {
  if (!class_group || class_group->size() == 1) return 0;
  return 2 * wire::allreduce(static_cast<double>(rows) * sizeof(float), class_group->size());
}

}  // namespace gcnlab

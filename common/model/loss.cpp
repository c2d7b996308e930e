#include "common/model/loss.hpp"

#include "common/comm/wire.hpp"

namespace gcnlab {

std::string to_string(SoftmaxComm s) { return s == SoftmaxComm::reduce_stats ? "allreduce" : "allgather"; }

SoftmaxComm parse_softmax_comm(const std::string& s) {
  GCNLAB_CHECK(s == "allreduce" || s == "allgather",
               "--softmax takes allgather (CAGNET: the logits' rows gathered) or allreduce (row max and sum "
               "reduced), got '{}'", s);
  return s == "allreduce" ? SoftmaxComm::reduce_stats : SoftmaxComm::gather_rows;
}

namespace {

std::int64_t total_classes(const ClassSplit& c) { return c.offsets.back() - c.offsets.front(); }

XentSums gather_rows(Backend& backend, Ledger& ledger, const ClassSplit& classes, ConstView z, std::int64_t col0,
                     const std::int32_t* labels, const std::uint8_t* split, double n_train, LossWorkspace& ws,
                     View g) {
  Communicator& group = *classes.group;
  const std::int64_t rows = z.rows, C = total_classes(classes);
  GCNLAB_ASSERT(static_cast<int>(classes.offsets.size()) == group.size() + 1 &&
                classes.offsets[group.rank()] == col0 && z.cols == classes.offsets[group.rank() + 1] - col0);
  const auto elements = static_cast<std::size_t>(rows * C);
  reserve_workspace(ws, backend, classes, rows);
  std::vector<std::int64_t> counts;
  for (int m = 0; m < group.size(); ++m) counts.push_back(rows * (classes.offsets[m + 1] - classes.offsets[m]));
  GCNLAB_ASSERT(z.ld == z.cols);
  group.allgather(std::span<const float>(z.data, static_cast<std::size_t>(rows * z.cols)),
                  std::span<float>(ws.gathered.data(), elements),
                  std::span<const std::int64_t>(counts), Category::allgather);
  auto s = ledger.time(Category::loss);
  const float* block = ws.gathered.data();
  for (int m = 0; m < group.size(); ++m) {  // member blocks -> whole rows
    const std::int64_t c0 = classes.offsets[m], w = classes.offsets[m + 1] - c0;
    backend.copy(ConstView{block, rows, w, w}, View{ws.rows.data() + c0, rows, w, C});
    block += rows * w;
  }
  View whole{ws.rows.data(), rows, C, C};
  XentSums sums = backend.softmax_xent(whole, 0, nullptr, nullptr, labels, split, static_cast<float>(1.0 / n_train),
                                       whole);
  backend.copy(ConstView{ws.rows.data() + col0, rows, z.cols, C}, g);
  return group.rank() == 0 ? sums : XentSums{};  // every member saw the same rows
}

}  // namespace

XentSums softmax_cross_entropy(Backend& backend, Ledger& ledger, const ClassSplit& classes, ConstView z,
                               std::int64_t col0, const std::int32_t* labels, const std::uint8_t* split,
                               double n_train, LossWorkspace& ws, View g) {
  if (!classes.split()) {  // whole rows local: max, sum and gradient in one pass per row
    auto s = ledger.time(Category::loss);
    return backend.softmax_xent(z, col0, nullptr, nullptr, labels, split, static_cast<float>(1.0 / n_train), g);
  }
  if (classes.comm == SoftmaxComm::gather_rows)
    return gather_rows(backend, ledger, classes, z, col0, labels, split, n_train, ws, g);
  const auto rows = static_cast<std::size_t>(z.rows);
  reserve_workspace(ws, backend, classes, z.rows);
  {
    auto s = ledger.time(Category::loss);
    backend.row_max(z, ws.max.data());
  }
  classes.group->allreduce(std::span<float>(ws.max.data(), rows), ReduceOp::max, Category::allreduce);
  {
    auto s = ledger.time(Category::loss);
    backend.row_sum_exp(z, ws.max.data(), ws.sum.data());
  }
  classes.group->allreduce(std::span<float>(ws.sum.data(), rows), ReduceOp::sum, Category::allreduce);
  auto s = ledger.time(Category::loss);
  return backend.softmax_xent(z, col0, ws.max.data(), ws.sum.data(), labels, split,
                              static_cast<float>(1.0 / n_train), g);
}

std::pair<Category, double> softmax_cross_entropy_bytes(const ClassSplit& classes, std::int64_t rows) {
  if (!classes.split()) return {Category::allreduce, 0};
  if (classes.comm == SoftmaxComm::reduce_stats)
    return {Category::allreduce, 2 * wire::allreduce(static_cast<double>(rows) * sizeof(float), classes.group->size())};
  const int me = classes.group->rank();
  const double others = static_cast<double>(total_classes(classes) - (classes.offsets[me + 1] - classes.offsets[me]));
  return {Category::allgather, static_cast<double>(rows) * others * sizeof(float)};  // the other members' blocks
}

void reserve_workspace(LossWorkspace& ws, Allocator& a, const ClassSplit& classes, std::int64_t rows) {
  if (!classes.split()) return;  // one pass, no workspace
  auto reserve = [&a](Buffer<float>& b, std::int64_t n) {
    if (b.size() < static_cast<std::size_t>(n)) b = Buffer<float>(a, static_cast<std::size_t>(n));
  };
  if (classes.comm == SoftmaxComm::reduce_stats) {  // row max and sum
    reserve(ws.max, rows), reserve(ws.sum, rows);
  } else {  // the members' blocks, then whole rows
    reserve(ws.gathered, rows * total_classes(classes)), reserve(ws.rows, rows * total_classes(classes));
  }
}

}  // namespace gcnlab

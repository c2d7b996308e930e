#include "common/comm/ledger.hpp"

namespace gcnlab {

namespace {
constexpr std::array<std::string_view, kNumCategories> kNames = {
    "spmm",        "gemm",         "elementwise", "loss",      "optimizer",
    "pack",        "sampling",     "sddmm",       "edge_softmax", "bcast_dense", "bcast_sparse", "allreduce",
    "allgather",   "reduce_scatter", "alltoall",  "p2p",       "staging",      "other"};
}

std::string_view to_string(Category c) { return kNames[static_cast<int>(c)]; }

std::optional<Category> category_from_string(std::string_view s) {
  for (int i = 0; i < kNumCategories; ++i)
    if (kNames[i] == s) return static_cast<Category>(i);
  return std::nullopt;
}

bool is_communication(Category c) {
  return c >= Category::bcast_dense && c <= Category::staging;
}

namespace {
constexpr std::array<std::string_view, kNumKernels> kKernelNames = {
    "spmm", "spmm_edges", "sddmm", "edge", "gemm", "elementwise", "reduction", "loss", "optimizer", "to_host", "to_device"};
}

std::string_view to_string(Kernel k) { return kKernelNames[static_cast<int>(k)]; }

std::optional<Kernel> kernel_from_string(std::string_view s) {
  for (int i = 0; i < kNumKernels; ++i)
    if (kKernelNames[i] == s) return static_cast<Kernel>(i);
  return std::nullopt;
}

CategoryTallies Ledger::take(Phase p) {
  CategoryTallies out = tallies_[static_cast<int>(p)];
  tallies_[static_cast<int>(p)] = CategoryTallies{};
  return out;
}

}  // namespace gcnlab

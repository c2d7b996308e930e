#pragma once
// The work a rank's kernels are given, by kind (docs/design.md "Kernel work"):
// what the backend's every call is asked to do, counted in the unit of its
// kind, beside the time the ledger charges to the breakdown category the call
// ran in. A real run counts it (common/backend/counting_backend.hpp); plan and
// simulate trace it by running the same step on a backend that computes
// nothing (planning/null_backend.hpp), and calibrate a rate per kind against
// measured runs (planning/perf_model.hpp). No model's work is a formula.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gcnlab {

enum class Kernel : int {
  spmm,         // nonzeros · columns: Y = A X
  spmm_edges,   // nonzeros · columns: Y = V X with per-edge, per-head values (GAT's aggregation and its transpose)
  sddmm,        // nonzeros · columns: out_k = g_i · z_j over the columns
  edge,         // nonzeros · heads, per pass over an edge tensor (scores, max, exp-sum, scale, dropout, sums, backward)
  gemm,         // m · n · k multiply-adds
  elementwise,  // elements written (fill, copy, axpy, activations, dropout, gathers, bf16 packing, ...)
  reduction,    // elements read by a reduction to fewer values (column sums, row max, row sums of squares)
  loss,         // elements of the softmax cross-entropy (logits)
  optimizer,    // parameter elements updated (Adam, SGD)
  to_host,      // bytes copied from backend to host memory (a device sync on a GPU)
  to_device,    // bytes copied from host to backend memory
  count
};
inline constexpr int kNumKernels = static_cast<int>(Kernel::count);

std::string_view to_string(Kernel k);
std::optional<Kernel> kernel_from_string(std::string_view s);
// Kernels that compute (every kind but the host transfers): what plan prices.
inline bool computes(Kernel k) { return k != Kernel::to_host && k != Kernel::to_device; }

struct Work {
  double amount = 0;  // in the kind's unit
  std::int64_t calls = 0;
  // Sparse kinds (spmm, spmm_edges, sddmm, edge): the nonzeros the calls
  // visited, whatever their width (each reads its index and value once).
  double nonzeros = 0;
  // Sparse kinds: the rows the calls visited times their width (columns or
  // heads): each row's output row, or its dense operand's row, once per row.
  // A row-split strategy's stages each visit their block's rows (1D's P
  // broadcast stages: n · f per SpMM per rank, whatever the nonzeros).
  double row_elements = 0;
  // The bytes the calls cannot avoid moving: each operand read once and each
  // result written once (an in-place operand twice), at its stored width —
  // what a kernel at the memory's speed takes (`bench` divides by the time).
  double bytes = 0;
  Work& operator+=(const Work& o) {
    amount += o.amount;
    calls += o.calls;
    nonzeros += o.nonzeros;
    row_elements += o.row_elements;
    bytes += o.bytes;
    return *this;
  }
  bool operator==(const Work&) const = default;
};

using KernelWork = std::array<Work, kNumKernels>;

inline KernelWork& operator+=(KernelWork& a, const KernelWork& b) {
  for (int k = 0; k < kNumKernels; ++k) a[k] += b[k];
  return a;
}

}  // namespace gcnlab

#pragma once
// Sums of partial products over a process group — the all-reduces of a 3D PMM
// (Plexus Alg. 1 lines 5 and 9, Alg. 2 lines 6 and 8) — sent in fp32 or bf16.
//
// With bf16 (ScaleGNN Sec. V-B, `--comm-precision bf16`) the fp32 partial sums
// are cast to bf16 before the all-reduce and back to fp32 after it: the wire
// volume of these collectives halves, every local kernel stays fp32. The
// numerically sensitive reductions (softmax statistics, the loss, the weight
// gradients handed to the optimiser) do not go through here and stay fp32.
//
// A sum can be posted nonblocking (the blocked aggregation of Plexus Sec. 5.2
// overlaps each block's all-reduce with the next block's SpMM): post() packs
// the block into a staging area and starts the all-reduce; once every posted
// one has been waited for, finish() widens them back into their blocks.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/backend/backend.hpp"
#include "common/comm/communicator.hpp"
#include "common/matrix/buffer.hpp"

namespace gcnlab {

enum class CommPrecision { fp32, bf16 };
CommPrecision parse_comm_precision(const std::string& s);
std::string to_string(CommPrecision p);
// Bytes one element of a partial sum occupies on the wire.
inline double wire_element_bytes(CommPrecision p) { return p == CommPrecision::bf16 ? 2.0 : 4.0; }

class PartialSums {
 public:
  PartialSums(Backend& backend, CommPrecision precision) : backend_(backend), precision_(precision) {}

  CommPrecision precision() const { return precision_; }
  // Room for this many elements in flight at once (bf16 staging; grows only,
  // and never while a sum is posted).
  void reserve(std::int64_t elements);
  // x = Σ over the group of x (x contiguous: ld == cols).
  void allreduce(Communicator& group, View x);
  // The same, nonblocking; x holds the sum after the returned operation's
  // wait() and, for bf16, the next finish().
  [[nodiscard]] Communicator::Pending post(Communicator& group, View x);
  void finish();

 private:
  Backend& backend_;
  CommPrecision precision_;
  Buffer<bf16> staging_;
  Ledger* ledger_ = nullptr;                       // the posting group's (times the unpacking)
  std::int64_t used_ = 0;                          // staging elements of the posted sums
  std::vector<std::pair<View, std::int64_t>> posted_;  // each posted block and its staging offset
};

}  // namespace gcnlab

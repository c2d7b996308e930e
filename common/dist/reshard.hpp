#pragma once
// Reshard: a dense matrix distributed in rectangles over the ranks of a
// communicator, moved into another distribution in one exchange of
// point-to-point messages (ScaleGNN Sec. IV-C4: the residual X_h,l-1 moved
// from a layer's input layout into its output layout, which 3D PMM's layer
// rotation puts on another plane of the grid).
//
// Each rank holds one rectangle of the global matrix in each distribution.
// Ranks with equal rectangles hold equal values (replicas); distinct
// rectangles of one distribution do not overlap. Every piece of a target
// rectangle comes from the rank itself where it holds it, else from one
// replica of its source rectangle, chosen by the receiver's rank so that
// the replicas share the sending. The plan is a pure function of the
// rectangles: the byte model reads the same plan that the exchange runs.

#include <vector>

#include "common/backend/backend.hpp"
#include "common/comm/communicator.hpp"
#include "common/core/blocks.hpp"

namespace gcnlab {

struct Rect {
  BlockRange rows, cols;
  bool empty() const { return rows.count == 0 || cols.count == 0; }
  bool operator==(const Rect& o) const {
    return rows.first == o.rows.first && rows.count == o.rows.count && cols.first == o.cols.first &&
           cols.count == o.cols.count;
  }
};

class Reshard {
 public:
  // from[r], to[r]: rank r's rectangles in the two distributions; me: this rank.
  Reshard(const std::vector<Rect>& from, const std::vector<Rect>& to, int me);

  // y (this rank's `to` rectangle) = x (its `from` rectangle), or y += x.
  // `staging` is grown as needed and kept by the caller between calls.
  void run(Communicator& comm, Backend& backend, ConstView x, View y, bool accumulate, Dense& staging) const;

  // Bytes this rank receives from other ranks (fp32), and sends to them.
  double wire_bytes() const;
  double sent_bytes() const;
  // Floats of staging a run needs (what it sends and receives).
  std::int64_t staging_elements() const;

 private:
  struct Piece {
    int peer;
    Rect r;  // global indices
  };
  Rect from_, to_;
  int me_;
  std::vector<Piece> sends_, recvs_;  // to and from other ranks
  std::vector<Rect> local_;           // pieces this rank holds in both distributions
};

}  // namespace gcnlab

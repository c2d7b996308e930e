#pragma once
// Masked softmax cross-entropy, averaged over the *global* number of training
// vertices, on logits whose class dimension may be split across a group of
// ranks (ClassSplit). Two ways to form whole-row statistics across the group:
//   reduce_stats  the row max and the row sum of exponentials are all-reduced
//                 over the group between three local passes (ew::RowMax,
//                 ew::RowSumExp, ew::SoftmaxXent): 2 floats per row;
//   gather_rows   CAGNET's (Sec. IV-C Eq. 2, IV-D Eq. 2): the logits' rows are
//                 all-gathered over the group, every member computes the softmax
//                 of whole rows and keeps the gradient of its own columns:
//                 n f_L / √P words per rank. The gradient needs no second
//                 gather (it is computed from the gathered rows).
// When the rows are whole on this rank it is one pass. Labels are read, never written.

#include <vector>

#include "common/backend/backend.hpp"
#include "common/comm/communicator.hpp"

namespace gcnlab {

enum class SoftmaxComm { reduce_stats, gather_rows };
std::string to_string(SoftmaxComm s);  // allreduce | allgather (the --softmax values)
SoftmaxComm parse_softmax_comm(const std::string& s);

// How the logits' classes are split across ranks.
struct ClassSplit {
  Communicator* group = nullptr;  // the ranks that split a row's classes; null: whole rows local
  SoftmaxComm comm = SoftmaxComm::reduce_stats;
  std::vector<std::int64_t> offsets;  // gather_rows: member m holds classes [offsets[m], offsets[m+1])
  bool split() const { return group && group->size() > 1; }
};

struct LossWorkspace {
  Buffer<float> max, sum;        // reduce_stats: one entry per local row
  Buffer<float> gathered, rows;  // gather_rows: the members' blocks, then whole rows (and their gradient)
};

// Writes G = dL/dZ for the local block z (columns [col0, col0 + z.cols)) and
// returns this rank's sums (under gather_rows only group member 0 reports them).
XentSums softmax_cross_entropy(Backend& backend, Ledger& ledger, const ClassSplit& classes, ConstView z,
                               std::int64_t col0, const std::int32_t* labels, const std::uint8_t* split,
                               double n_train, LossWorkspace& ws, View g);

// Wire bytes of one call (the class-group collectives) and their category, for the byte model.
std::pair<Category, double> softmax_cross_entropy_bytes(const ClassSplit& classes, std::int64_t rows);
// Makes `ws` large enough for `rows` logit rows (grows, never shrinks): called by
// the trainer's buffer plan (common/model/model_buffers.hpp, which counts it) and
// by softmax_cross_entropy itself for rows beyond the plan.
void reserve_workspace(LossWorkspace& ws, Allocator& a, const ClassSplit& classes, std::int64_t rows);

}  // namespace gcnlab

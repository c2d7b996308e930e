#pragma once
// Masked softmax cross-entropy, averaged over the *global* number of training
// vertices, on logits whose class dimension may be split across a group of
// ranks: the row max and the row sum of exponentials are all-reduced over
// that group between the three local passes (ew::RowMax, ew::RowSumExp,
// ew::SoftmaxXent). When the rows are whole on this rank it is one pass.
// Labels are read, never written.

#include "common/backend/backend.hpp"
#include "common/comm/communicator.hpp"

namespace gcnlab {

struct LossWorkspace {
  Buffer<float> max, sum;  // one entry per local row
};

// Writes G = dL/dZ for the local block z (columns [col0, col0 + z.cols)) and
// returns this rank's sums; `class_group` may be null (whole rows local).
XentSums softmax_cross_entropy(Backend& backend, Ledger& ledger, Communicator* class_group, ConstView z,
                               std::int64_t col0, const std::int32_t* labels,
                               const std::uint8_t* split, double n_train, LossWorkspace& ws, View g);

// Wire bytes of one call (the class-group reductions), for the byte model.
double softmax_cross_entropy_bytes(const Communicator* class_group, std::int64_t rows);

}  // namespace gcnlab

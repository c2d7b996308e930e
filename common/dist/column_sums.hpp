#pragma once
// Column sums over the ranks that split a matrix's rows: the reduction of a
// per-column parameter's gradient (a bias's dL/db = Σ_i G_i, RMSNorm's
// dL/dγ), which each rank has summed over its own rows. One all-reduce of the
// rank's columns over a group that holds exactly one copy of each row block
// (Strategy::sum_over_rows of the strategies whose layouts are block rows or
// 2D/3D blocks; a replica of a row block is left out of the group and gets
// the same sum from its own group).

#include <span>

#include "common/comm/byte_model.hpp"
#include "common/comm/communicator.hpp"
#include "common/comm/wire.hpp"

namespace gcnlab {

// `per_column`: one contiguous row of values.
inline void sum_columns_over(Communicator& group, View per_column) {
  if (group.size() > 1) group.allreduce(row_span(per_column), ReduceOp::sum, Category::allreduce);
}

// Its byte companion for `cols` columns.
inline void sum_columns_over_bytes(const Communicator& group, std::int64_t cols, ByteModel& m) {
  if (group.size() > 1)
    m.add(Category::allreduce, group, wire::allreduce(static_cast<double>(cols) * sizeof(float), group.size()));
}

}  // namespace gcnlab

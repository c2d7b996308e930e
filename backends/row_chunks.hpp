#pragma once
// How the CUDA backend's edge passes walk a block's stored rows (CSR-vector: a group
// of lanes per row, Bell & Garland, SC'09; long rows split into a warp's chunks): a
// plain function of the block's row offsets, unit-tested without a GPU
// (tests/unit/test_devices.cpp).
//
//  - Short rows: a group of `lanes` lanes per row (a power of two in [heads, 32]).
//  - Long rows (more than `short_edges` = lanes x kSteps / heads edges: more than kSteps
//    steps of their group): chunks of `chunk` edges (a warp's kSteps steps), a warp
//    each (a row of one chunk gets a warp, a hub row many), whose per-head partial
//    results are combined in chunk order: the same bits on every run.
//  - The lanes are those whose walk occupies the fewest lane-steps: a short row of e
//    edges L lanes for max(1, ceil(e heads / L)) steps, a long row a warp per chunk for
//    its steps and one more for the combine (ties: more lanes). cuSPARSE's CSR-vector
//    kernels size the lanes from the mean row instead, but a power-law block's mean is
//    its hubs' (R-MAT 20's stored rows: mean 30 edges, median 1, 38 % empty), which gave
//    a warp per row and left most lanes idle; here the hubs go to chunks and the short
//    rows' lengths choose.
//  - Heads that do not divide 32: a warp per row, no long rows (the functor's row form
//    on one lane, as before: GAT's heads are powers of two).

#include <cstdint>
#include <span>
#include <vector>

namespace gcnlab {

struct RowChunks {
  static constexpr int kWarp = 32;
  static constexpr int kSteps = 8;  // a group's steps over a row before the row counts as long

  int lanes = kWarp;               // lanes per short row
  std::int64_t short_edges = 0;    // rows with more edges are long
  std::int64_t chunk = 0;          // edges per chunk of a long row
  std::vector<std::int64_t> rows;  // the long rows (stored-row indices), ascending
  std::vector<std::int64_t> first = {0};  // rows.size() + 1: long row r's chunks are [first[r], first[r + 1])
  std::vector<std::int32_t> chunk_row;    // each chunk's long row (an index into rows)

  std::int64_t chunks() const { return first.back(); }
};

// The walk of a block with stored-row offsets `rowptr` (stored rows + 1 entries) and `heads` heads (>= 1).
RowChunks plan_row_chunks(std::span<const std::int64_t> rowptr, int heads);

}  // namespace gcnlab

#pragma once
// `gcnlab prepare` across ranks (issue 75): a graph prepared by P ranks of
// which none holds it whole, into the directory that one process writes, byte
// for byte (common/data/shards.hpp).
//
//   1. Rows. Each rank draws 1/P of the edges (R-MAT's draws are pure
//      functions of their index, so the graph is the same at every P; an
//      edge list's draws are its bytes) and counts the entries of every row;
//      the counts, summed (8n bytes a rank), give each rank a run of rows
//      holding about 1/P of the entries (a run may cut a shard row block), and
//      each row's length before duplicates. A second pass sends
//      each entry to the owner of its row of A, and of Aᵀ, by all-to-all in
//      rounds of `chunk` draws; the rows are then sorted and their duplicates
//      dropped, as in one process (compact_rows).
//   2. Vertex data and facts. Degrees, the degree-bucket labels (a rank's
//      place in the stable order by degree from a global histogram and the
//      histograms of the ranks before it), the split, the statistics of
//      `gcnlab info`, and the fingerprint: one stream fed by the ranks in
//      turn, so that it hashes what one process hashes.
//   3. Âᵀ's rows: the diagonal added in place, D^-1/2 from every vertex's
//      degree (allgathered: 8n bytes a rank).
//   4. Writing: each rank writes its ranges of the vertex files (at their
//      offsets). In the block layout it writes the shards of its own rows;
//      in any other the orderings are computed alike on every rank from
//      n-long arrays of every vertex's lengths (--partitioner random,
//      Plexus's permutations, partitioners/prepare.hpp), and for each Âᵀ
//      version the rows move, in rounds, to the owners of their positions
//      (cut by entries alike), which write those shards. A row block that two
//      or more ranks' rows cut is written by each at its offsets in the
//      block's K files (ShardWriter::write_part). Rank 0 writes meta.json after
//      the others, so the directory is whole or incomplete, never partial.
//
// Beside the n-long vertex arrays (the summed row counts, D^-1/2, the shard
// writer's column maps and, for other layouts, the orderings, their inverse
// and the lengths: 24 to 64 bytes a vertex), a rank holds its rows of A (and
// of Aᵀ when directed), one round of entries, and while a version other than
// the block layout's is written, its rows of that version too.
//
// Sources: R-MAT and SBM (draws by index), edge lists and Matrix Market files
// (by byte ranges: a line belongs to the range its first byte is in; a gzip
// file is one stream, read by rank 0 in rounds), OGB directories (its vertex
// data read by rank 0 and broadcast, its features streamed into x.bin; the
// npz form's edge_index by element ranges when stored, by rank 0 when
// deflated).
// Layouts: --partitioner block or random, or with --parts K any partitioner
// that needs only the row lengths (partition_by_lengths) or PT-Scotch on the
// ranks' rows; any --permutation. Other sources are prepared by one process;
// METIS is refused at P > 1 (apps/gcnlab/prepare.cpp). Bad input found by
// one rank (a line of its byte range) is agreed on: every rank throws the
// lowest failing rank's message, and the directory is made only after the
// input was read.

#include <cstdint>
#include <string>

#include "common/comm/mpi_communicator.hpp"
#include "common/data/shards.hpp"
#include "partitioners/prepare.hpp"

namespace gcnlab {

// Whether prepare_across_ranks prepares `spec` laid out by `plan`.
bool prepares_across_ranks(const std::string& spec, const VertexPlan& plan);

// Prepares `spec` as K x K shards in `dir` on every rank of `comm` (all call
// it); returns the metadata written. `chunk`: draws (and entries, when rows
// move to their positions) per rank per round of an exchange (tests make it
// small to cross rounds).
ShardMeta prepare_across_ranks(MpiCommunicator& comm, const std::string& spec, const VertexPlan& plan, int K,
                              const std::string& dir, std::int64_t chunk = std::int64_t{1} << 18);

}  // namespace gcnlab

#pragma once
// gcl:DIR — a prepared dataset (Plexus Sec. 5.4, parallel data loading),
// written once by `gcnlab prepare --shards KxK --out DIR`. It is a Graph
// (graph.hpp) for every strategy: a rank reads and merges only the adjacency
// shards its blocks overlap, and only the rows of vertex data it holds, so no
// rank ever holds the whole adjacency, feature matrix or any per-vertex array
// of length n. K is independent of the rank count: any block a strategy asks
// for is merged from the shards it overlaps.
//
//   DIR/meta.json          {"schema": "gcnlab.shards/2", name, spec, nodes, nnz (of A), features, classes,
//                           directed, shards K, synthetic_features, feature_seed, class_signal,
//                           split_counts [none, train, val, test], layout {partitioner, parts, blocks,
//                           permutation, seed, orderings, versions}, info {degree statistics},
//                           partition {quality report, when partitioned}}
//   DIR/order<id>.bin      i64[n]   ordering id: position q holds vertex order[q]
//   DIR/adj-<r>-<c>-<i>-<j>.bin    shard (i, j) of Π_r Âᵀ Π_cᵀ cut into K x K blocks (block_range):
//                          i64 rows, i64 cols, i64 nnz, i64[rows+1] rowptr, i32[nnz] local cols, f32[nnz] values
//   DIR/x.bin              f32[n x f] features in original vertex order (absent when synthetic)
//   DIR/labels.bin i32[n], DIR/split.bin u8[n]   in original vertex order
//   DIR/degrees.bin        i64[n]   in-degrees in A, in original vertex order (meta "degrees": true;
//                          directories prepared before it count them from the shards' rows)
// Little-endian. Vertex data is read by row (pread of the runs a rank needs).

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <span>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/core/atomic_file.hpp"
#include "common/core/progress.hpp"
#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"
#include "common/matrix/host_csr.hpp"

namespace gcnlab {

struct ShardMeta {
  std::string name, spec, fingerprint;  // dataset_fingerprint() of the data prepared
  std::int64_t nodes = 0, nnz = 0, features = 0;
  int classes = 0, shards = 0;
  bool directed = false, synthetic_features = false;
  bool degrees = false;  // degrees.bin is there
  std::uint64_t feature_seed = 0;
  float class_signal = 0;
  std::array<std::int64_t, 4> split_counts{};  // per ew::Split
  GraphLayout layout;
  DatasetInfo info{};
  nlohmann::json partition;  // quality report of the partition (null when none)
};

class ShardStore final : public Graph {
 public:
  explicit ShardStore(const std::string& dir);  // reads meta.json
  const ShardMeta& meta() const { return meta_; }
  const std::string& dir() const { return dir_; }

  // Vertex data of the given vertices (original ids), in their order.
  void features(std::span<const std::int64_t> vertices, std::int64_t c0, std::int64_t c1, float* out) const;
  std::vector<std::int32_t> labels(std::span<const std::int64_t> vertices) const;
  std::vector<std::uint8_t> split(std::span<const std::int64_t> vertices) const;

  // Bytes this process has read from the directory so far (tests: no rank reads it all).
  std::int64_t bytes_read() const { return bytes_read_; }

 protected:
  std::vector<std::int64_t> read_vertices(int id, std::int64_t q0, std::int64_t q1) const override;
  HostCsr read_block_t(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const override;
  void read_column_blocks(Direction d, std::int64_t r0, std::int64_t r1, std::span<const ColumnRange> columns,
                          const BlockSink& sink) const override;
  std::vector<std::int64_t> read_in_degrees(int id, std::int64_t q0, std::int64_t q1) const override;

 private:
  class ShardCache;  // the shards of the previous block, which its right neighbour may share
  HostCsr assemble_t(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1,
                     ShardCache* cache) const;
  ShardStore(const std::string& dir, ShardMeta meta);
  std::string path(const std::string& file) const;
  // Row v of a file of n rows of `width` T's, for each vertex, in the given order.
  template <class T>
  std::vector<T> rows_of(const std::string& file, std::span<const std::int64_t> vertices, std::int64_t width,
                         std::int64_t c0, std::int64_t c1) const;

  std::string dir_;
  ShardMeta meta_;
  mutable std::atomic<std::int64_t> bytes_read_{0};
};

// Writes `d`, laid out as `g` (prepare_graph), as K x K shards of every Âᵀ
// version of g's layout. `info` and `fingerprint` are dataset_info(d) and
// dataset_fingerprint(d), taken before d's adjacency went to prepare_graph.
// `partition`: the partition's quality report (or null). Beside g, the peak is
// the row offsets of one row block's K shards and a chunk of `chunk_entries`
// nonzeros (8 bytes each; tests make it small to cross chunk boundaries).
void write_shards(const Dataset& d, const DatasetInfo& info, const std::string& fingerprint, const InMemoryGraph& g,
                  int K, const nlohmann::json& partition, const std::string& dir,
                  std::int64_t chunk_entries = std::int64_t{1} << 22);

// write_shards's steps, for writers that hold only some rows of Âᵀ (prepare
// across ranks, partitioners/prepare_ranks.hpp): the directory made and its
// meta.json removed; the shard files of one version (ShardWriter); meta.json
// last, when every other file is there.
struct ShardRows {
  const HostCsr& a_t;                           // rows [first_vertex, first_vertex + a_t.rows) of Âᵀ
  std::int64_t first_vertex;
  std::span<const std::int64_t> row_vertices;   // the vertex at each position from first_position on
  std::int64_t first_position;                  // (covering the positions written); empty: position q holds q
  std::span<const std::int64_t> column_order;   // the whole column ordering: position q holds vertex order[q];
                                                // empty: the identity
};
void start_shard_directory(const std::string& dir, std::int64_t n, int K);
void check_shard_destination(const std::string& dir);  // before any work: not a file

// One adjacency version's K x K shard files from `rows`, by row block. A
// block is written whole by one writer (write_block), or cut between writers
// at positions, each writing its part [first, end) of the block's K files at
// their offsets (PartFile): `before[j]` entries of shard j belong to the rows
// ahead of the part, and the shard holds `total[j]` (the writers' entries()
// summed); the block's first writer creates its files before any part is
// written and commits them after every part is. Each part is streamed in
// chunks of at most `chunk_entries` entries (bucketed by column block, each
// row's columns sorted) and chunk_entries / K rows, so beside the rows and,
// for a column ordering, its maps (8 bytes a vertex) the peak is one chunk and
// its rows' K row offsets, about 16 bytes a chunk entry.
class ShardWriter {
 public:
  ShardWriter(const ShardRows& rows, std::int64_t n, int K, std::array<int, 2> version, std::string dir,
              std::int64_t chunk_entries);

  void write_block(int i, Progress& progress);  // row block i whole: made, written, moved into place

  // The entries of positions [first, end) of row block i in each of its K shards.
  std::vector<std::int64_t> entries(int i, std::int64_t first, std::int64_t end) const;
  void create(int i, std::span<const std::int64_t> total) const;
  void write_part(int i, std::int64_t first, std::int64_t end, std::span<const std::int64_t> before,
                  std::span<const std::int64_t> total, Progress& progress);
  void commit(int i) const;

 private:
  struct Entry {
    std::int32_t col;
    float val;
  };

  // A shard file's sections (the format above): the header (rows, cols,
  // nnz), then rows + 1 row offsets, then the columns, then the values.
  static std::int64_t row_offset_at(std::int64_t k) { return 3 * 8 + k * 8; }
  static std::int64_t columns_at(std::int64_t rows) { return row_offset_at(rows + 1); }

  std::string path(int i, int j) const;
  std::pair<std::int64_t, std::int64_t> row_of(std::int64_t q) const;  // Âᵀ's entries of position q
  // A vertex's column block and column in it: looked up in col_block_ and
  // col_local_ (per vertex) for a column ordering, computed for the identity.
  std::pair<int, std::int32_t> column_of(std::int64_t u) const;
  // The row offsets, columns and values of rows [qa, qb) of the part's shards,
  // qb the first row that no longer fits the chunk; returns qb. written[j]:
  // shard j's entries before row qa, then before qb.
  std::int64_t write_chunk(int i, std::int64_t qa, std::int64_t end, std::vector<std::int64_t>& written,
                           std::span<const std::int64_t> total, std::vector<std::unique_ptr<PartFile>>& files);

  ShardRows rows_;
  std::int64_t n_;
  int K_;
  std::array<int, 2> version_;
  std::string dir_;
  std::int64_t chunk_entries_;
  std::vector<std::int32_t> col_block_, col_local_;  // per vertex, for a column ordering (column_of)
  std::vector<Entry> chunk_;
  std::vector<std::int64_t> offsets_;  // the chunk's rows' offsets in each shard
  std::vector<std::int32_t> cols_;
  std::vector<float> vals_;
};

void finish_shard_directory(const std::string& dir, const ShardMeta& meta);
// The metadata of `d` (its split counted from d.split) laid out as `layout`.
ShardMeta shard_meta_of(const Dataset& d, const DatasetInfo& info, const std::string& fingerprint,
                        const GraphLayout& layout, int K, const nlohmann::json& partition);

// The dataset of a shard directory: metadata only, `shards` set.
Dataset read_shard_dataset(const std::string& dir);
ShardMeta read_shard_meta(const std::string& dir);  // DIR/meta.json, checked

bool is_shard_directory(const std::string& path);

}  // namespace gcnlab

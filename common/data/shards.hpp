#pragma once
// gcl:DIR — a dataset stored as 2D shards (Plexus Sec. 5.4, parallel data
// loading), written by `gcnlab prepare --shards KxK --out DIR`. A rank reads
// and merges only the shards that overlap its blocks, so no rank ever holds
// the whole adjacency or feature matrix.
//
//   DIR/meta.json          {"schema": "gcnlab.shards/1", name, spec, nodes, nnz (of A), features,
//                           classes, directed, shards K, permutation, seed, synthetic_features,
//                           feature_seed, class_signal, versions [[r, c], ...]}
//   DIR/order<id>.bin      i64[n]   ordering id: position q holds vertex order[q]
//   DIR/adj-<r>-<c>-<i>-<j>.bin    shard (i, j) of Π_r Âᵀ Π_cᵀ cut into K x K blocks (block_range):
//                          i64 rows, i64 cols, i64 nnz, i64[rows+1] rowptr, i32[nnz] local cols, f32[nnz] values
//   DIR/x-<i>.bin          f32[rows x f]  features of row block i of ordering 0 (absent when synthetic)
//   DIR/labels.bin i32[n], DIR/split.bin u8[n]   per vertex (O(n): every rank reads them)
// Little-endian.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/matrix/host_csr.hpp"

namespace gcnlab {

struct Dataset;
struct Graph;

struct ShardMeta {
  std::string name, spec, permutation;
  std::int64_t nodes = 0, nnz = 0, features = 0;
  int classes = 0, shards = 0;
  bool directed = false, synthetic_features = false;
  std::uint64_t seed = 0, feature_seed = 0;
  float class_signal = 0;
  std::vector<std::array<int, 2>> versions;  // (row ordering, column ordering) of each stored Âᵀ version
};

class ShardStore {
 public:
  explicit ShardStore(std::string dir);  // reads meta.json
  const ShardMeta& meta() const { return meta_; }
  const std::string& dir() const { return dir_; }

  std::vector<std::int64_t> ordering(int id) const;
  // Rows [r0, r1) of ordering r x columns [c0, c1) of ordering c of Âᵀ, local
  // indices; merged from the overlapping shards of version (r, c).
  HostCsr adjacency(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const;
  // Features [c0, c1) of the given vertices (stored features only).
  void features(const std::vector<std::int64_t>& vertices, std::int64_t c0, std::int64_t c1, float* out) const;

 private:
  std::string dir_;
  ShardMeta meta_;
};

// Writes `d` as K x K shards of the given Âᵀ versions; orderings[id] are the
// orderings (positions of `g`, which must be unpermuted: g.order = identity).
void write_shards(const Dataset& d, const Graph& g, const std::vector<std::vector<std::int64_t>>& orderings,
                  const std::vector<std::array<int, 2>>& versions, int K, const std::string& permutation,
                  std::uint64_t seed, const std::string& dir);

// The vertex data of a shard directory (labels, split; features stay on disk)
// with `shards` set, and its Graph: n vertices, identity order, no matrices.
Dataset read_shard_dataset(const std::string& dir);
Graph shard_graph(const Dataset& d);

bool is_shard_directory(const std::string& path);

}  // namespace gcnlab

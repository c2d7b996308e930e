#pragma once
// Vertex partitions (`--partitioner NAME|FILE`, `gcnlab partition`).
//
// A partition assigns each vertex (original id) to one of K parts. A
// strategy that cuts the graph into K block rows (1d, 1.5d, sa-1d, sa-1.5d)
// uses the parts as its blocks, of unequal sizes; the others (2d, split-3d)
// use only the induced ordering. Methods:
//   block      contiguous ids, equal sizes (CAGNET's default)
//   block-nnz  contiguous ids, balanced nonzeros of Â
//   random     a seeded random permutation cut into equal blocks (CAGNET's and
//              MG-GCN's load balancing); independent of the rank count
//   metis      METIS k-way, minimising the edge cut, balanced vertices
//   metis-nnz  the same, balanced nonzeros (vertex weight = degree + 1)
//   volume     METIS minimising the total communication volume, then a
//              refinement that lowers the maximum send volume of a part (as
//              Graph-VB does; see volume.cpp)
//   FILE       one part id per line, original vertex order (gcnlab partition --out)

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/matrix/host_csr.hpp"

namespace gcnlab {

struct Partition {
  int parts = 0;
  std::vector<std::int32_t> part;  // part of each original vertex

  // Vertices sorted by part (stable): order[p] = original vertex at position p.
  std::vector<std::int64_t> order() const;
  // Block boundaries in positions: part k = [offsets[k], offsets[k+1]).
  std::vector<std::int64_t> offsets() const;
};

// Computes a partition of the graph `adj` (A without self-loops) into `parts`
// parts. Throws gcnlab::Error for an unknown method or an unusable file.
Partition make_partition(const std::string& method, const HostCsr& adj, int parts, std::uint64_t seed,
                         double imbalance = 0.03);

std::vector<std::string> partition_methods();

// Whether `method` reads the whole graph (METIS's); the others (block,
// block-nnz, random, a partition file) need only every vertex's row length in
// A, and partition_by_lengths computes them from those alone, as
// make_partition does (for preparers that hold no whole graph).
bool partition_needs_graph(const std::string& method);
Partition partition_by_lengths(const std::string& method, std::span<const std::int64_t> row_length, int parts,
                               std::uint64_t seed);

// Validates: n entries, ids in [0, parts), every part non-empty.
void check_partition(const Partition& p, std::int64_t n, const std::string& what);

void write_partition(const Partition& p, const std::string& path);
Partition read_partition(const std::string& path, std::int64_t n, int parts);

// Quality as in SA Table 2, for sparsity-aware SpMMs on the symmetrised graph:
// vertex v of part p is sent to every other part holding a neighbour of v.
struct PartitionQuality {
  std::int64_t edge_cut = 0;              // undirected edges between parts
  std::int64_t total_volume = 0;          // Σ_v (connectivity(v) - 1), in rows
  std::vector<std::int64_t> send, recv;   // rows sent / received per part
  std::vector<std::int64_t> size, nnz;    // vertices and nonzeros of Â per part
  double send_max() const;
  double send_mean() const;
  double recv_max() const;
  double recv_mean() const;
  double imbalance_percent() const;  // (max send / mean send - 1) x 100
};
PartitionQuality evaluate_partition(const HostCsr& adj, const Partition& p);
// Its counts over the vertices [first, first + sym.rows) alone, from their
// rows of the symmetrised structure (`sym`, no self-loops) and their row
// lengths in A: summed over ranks that hold every vertex once, what
// evaluate_partition counts.
PartitionQuality quality_of_rows(const HostCsr& sym, std::int64_t first, std::span<const std::int64_t> row_length,
                                 const Partition& p);
// As JSON for results files and prepared directories (rows of H; x f·4 for bytes per SpMM).
nlohmann::json partition_report(const PartitionQuality& q, double seconds);

// The symmetrised structure A + Aᵀ without self-loops (what METIS and the volume metrics read).
HostCsr symmetrize(const HostCsr& adj);

}  // namespace gcnlab

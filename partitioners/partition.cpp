#include "partitioners/partition.hpp"

#include <algorithm>
#include <fstream>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/core/atomic_file.hpp"
#include "common/core/error.hpp"
#include "common/core/permutation.hpp"
#include "common/core/blocks.hpp"
#include "partitioners/methods.hpp"

namespace gcnlab {

std::vector<std::int64_t> Partition::order() const {
  std::vector<std::int64_t> o(part.size());
  std::iota(o.begin(), o.end(), 0);
  std::stable_sort(o.begin(), o.end(), [&](std::int64_t a, std::int64_t b) { return part[a] < part[b]; });
  return o;
}

std::vector<std::int64_t> Partition::offsets() const {
  std::vector<std::int64_t> off(parts + 1, 0);
  for (std::int32_t p : part) ++off[p + 1];
  for (int k = 0; k < parts; ++k) off[k + 1] += off[k];
  return off;
}

std::vector<std::string> partition_methods() {
  return {"block", "block-nnz", "random", "metis", "metis-nnz", "volume"};
}

HostCsr symmetrize(const HostCsr& adj) {
  std::vector<Coo> e;
  e.reserve(2 * adj.nnz());
  for (std::int64_t u = 0; u < adj.rows; ++u)
    for (std::int64_t k = adj.rowptr[u]; k < adj.rowptr[u + 1]; ++k) {
      if (adj.col[k] == u) continue;
      e.push_back({u, adj.col[k], 1.f});
      e.push_back({adj.col[k], u, 1.f});
    }
  return csr_from_coo(adj.rows, adj.cols, std::move(e), false);
}

namespace {

Partition from_offsets(const std::vector<std::int64_t>& off, const std::vector<std::int64_t>& order) {
  Partition p;
  p.parts = static_cast<int>(off.size()) - 1;
  p.part.resize(order.size());
  for (int k = 0; k < p.parts; ++k)
    for (std::int64_t pos = off[k]; pos < off[k + 1]; ++pos) p.part[order[pos]] = k;
  return p;
}

// Contiguous cut points balancing Σ weight over parts (greedy on the prefix sum).
std::vector<std::int64_t> balanced_cuts(const std::vector<double>& weight, int parts) {
  const std::int64_t n = static_cast<std::int64_t>(weight.size());
  std::vector<double> prefix(n + 1, 0);
  for (std::int64_t v = 0; v < n; ++v) prefix[v + 1] = prefix[v] + weight[v];
  std::vector<std::int64_t> off(parts + 1, 0);
  off[parts] = n;
  for (int k = 1; k < parts; ++k) {
    const double target = prefix[n] * k / parts;
    std::int64_t cut = std::lower_bound(prefix.begin(), prefix.end(), target) - prefix.begin();
    // every part keeps at least one vertex
    cut = std::clamp<std::int64_t>(cut, off[k - 1] + 1, n - (parts - k));
    off[k] = cut;
  }
  return off;
}

}  // namespace

bool partition_needs_graph(const std::string& method) {
  return method == "metis" || method == "metis-nnz" || method == "volume";
}

Partition partition_by_lengths(const std::string& method, std::span<const std::int64_t> row_length, int parts,
                               std::uint64_t seed) {
  const auto n = static_cast<std::int64_t>(row_length.size());
  GCNLAB_CHECK(parts >= 1, "a partition needs at least one part");
  GCNLAB_CHECK(parts <= n, "cannot cut {} vertices into {} non-empty parts", n, parts);
  GCNLAB_ASSERT(!partition_needs_graph(method));
  std::vector<std::int64_t> identity(n);
  std::iota(identity.begin(), identity.end(), 0);
  Partition p;
  if (method == "block") {
    p = from_offsets(block_offsets(n, parts), identity);
  } else if (method == "block-nnz") {
    std::vector<double> w(n);
    for (std::int64_t v = 0; v < n; ++v) w[v] = static_cast<double>(row_length[v] + 1);
    p = from_offsets(balanced_cuts(w, parts), identity);
  } else if (method == "random") {
    p = from_offsets(block_offsets(n, parts), random_permutation(n, seed));
  } else {
    std::ifstream probe(method);
    GCNLAB_CHECK(probe.good(), "unknown --partitioner '{}' (methods: {}; or a partition file)", method,
                 fmt::join(partition_methods(), ", "));
    return read_partition(method, n, parts);
  }
  check_partition(p, n, method);
  return p;
}

Partition make_partition(const std::string& method, const HostCsr& adj, int parts, std::uint64_t seed,
                         double imbalance) {
  const std::int64_t n = adj.rows;
  if (!partition_needs_graph(method)) {
    std::vector<std::int64_t> length(static_cast<std::size_t>(n));
    for (std::int64_t v = 0; v < n; ++v) length[v] = adj.rowptr[v + 1] - adj.rowptr[v];
    return partition_by_lengths(method, length, parts, seed);
  }
  GCNLAB_CHECK(parts >= 1, "a partition needs at least one part");
  GCNLAB_CHECK(parts <= n, "cannot cut {} vertices into {} non-empty parts", n, parts);
  Partition p;
  if (method == "metis" || method == "metis-nnz") {
    p = metis_partition(symmetrize(adj), parts, seed, imbalance, /*minimise_volume=*/false,
                        method == "metis-nnz" ? &adj : nullptr);
  } else {
    const HostCsr s = symmetrize(adj);
    p = refine_max_send_volume(s, metis_partition(s, parts, seed, imbalance, /*minimise_volume=*/true, nullptr),
                               imbalance);
  }
  check_partition(p, n, method);
  return p;
}

void check_partition(const Partition& p, std::int64_t n, const std::string& what) {
  GCNLAB_CHECK(static_cast<std::int64_t>(p.part.size()) == n, "partition '{}' has {} entries for {} vertices", what,
               p.part.size(), n);
  std::vector<std::int64_t> size(p.parts, 0);
  for (std::int64_t v = 0; v < n; ++v) {
    GCNLAB_CHECK(p.part[v] >= 0 && p.part[v] < p.parts, "partition '{}': vertex {} has part {} (expected 0..{})", what,
                 v, p.part[v], p.parts - 1);
    ++size[p.part[v]];
  }
  for (int k = 0; k < p.parts; ++k) GCNLAB_CHECK(size[k] > 0, "partition '{}': part {} is empty", what, k);
}

void write_partition(const Partition& p, const std::string& path) {
  AtomicFile file(path);
  for (std::int32_t k : p.part) file.stream() << k << '\n';
  file.commit();
}

Partition read_partition(const std::string& path, std::int64_t n, int parts) {
  std::ifstream in(path);
  GCNLAB_CHECK(in.good(), "cannot open partition file '{}'", path);
  Partition p;
  p.parts = parts;
  std::string line;
  long lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    try {
      std::size_t used = 0;
      const long long k = std::stoll(line, &used);
      GCNLAB_CHECK(used == line.size(), "");
      GCNLAB_CHECK(k >= 0 && k < parts, "partition file '{}' line {}: part {} is not in 0..{} (the strategy needs {} parts)",
                   path, lineno, k, parts - 1, parts);
      p.part.push_back(static_cast<std::int32_t>(k));
    } catch (const Error&) {
      throw;
    } catch (const std::exception&) {
      fail("partition file '{}' line {}: '{}' is not a part id", path, lineno, line);
    }
  }
  GCNLAB_CHECK(static_cast<std::int64_t>(p.part.size()) == n, "partition file '{}' has {} entries but the graph has {} vertices",
               path, p.part.size(), n);
  check_partition(p, n, path);
  return p;
}

nlohmann::json partition_report(const PartitionQuality& q, double seconds) {
  const auto nnz_max = *std::max_element(q.nnz.begin(), q.nnz.end());
  const double nnz_mean = std::accumulate(q.nnz.begin(), q.nnz.end(), 0.0) / static_cast<double>(q.nnz.size());
  return {{"parts", q.send.size()},
          {"edge_cut", q.edge_cut},
          {"total_volume_rows", q.total_volume},
          {"send_rows_max", q.send_max()},
          {"send_rows_mean", q.send_mean()},
          {"recv_rows_max", q.recv_max()},
          {"recv_rows_mean", q.recv_mean()},
          {"send_imbalance_percent", q.imbalance_percent()},
          {"nnz_max_over_mean", nnz_max / nnz_mean},
          {"seconds", seconds}};
}

double PartitionQuality::send_max() const { return send.empty() ? 0 : *std::max_element(send.begin(), send.end()); }
double PartitionQuality::recv_max() const { return recv.empty() ? 0 : *std::max_element(recv.begin(), recv.end()); }
double PartitionQuality::send_mean() const {
  return send.empty() ? 0 : std::accumulate(send.begin(), send.end(), 0.0) / static_cast<double>(send.size());
}
double PartitionQuality::recv_mean() const {
  return recv.empty() ? 0 : std::accumulate(recv.begin(), recv.end(), 0.0) / static_cast<double>(recv.size());
}
double PartitionQuality::imbalance_percent() const {
  return send_mean() > 0 ? (send_max() / send_mean() - 1) * 100 : 0;
}

PartitionQuality evaluate_partition(const HostCsr& adj, const Partition& p) {
  std::vector<std::int64_t> length(static_cast<std::size_t>(adj.rows));
  for (std::int64_t v = 0; v < adj.rows; ++v) length[v] = adj.rowptr[v + 1] - adj.rowptr[v];
  return quality_of_rows(symmetrize(adj), 0, length, p);
}

PartitionQuality quality_of_rows(const HostCsr& sym, std::int64_t first, std::span<const std::int64_t> row_length,
                                 const Partition& p) {
  PartitionQuality q;
  q.send.assign(p.parts, 0);
  q.recv.assign(p.parts, 0);
  q.size.assign(p.parts, 0);
  q.nnz.assign(p.parts, 0);
  std::vector<std::int64_t> seen(p.parts, -1);
  for (std::int64_t i = 0; i < sym.rows; ++i) {
    const std::int64_t v = first + i;
    const int pv = p.part[v];
    ++q.size[pv];
    q.nnz[pv] += row_length[i] + 1;  // row of Â = A + I
    seen[pv] = v;
    for (std::int64_t k = sym.rowptr[i]; k < sym.rowptr[i + 1]; ++k) {
      const std::int64_t u = sym.col[k];
      const int pu = p.part[u];
      if (pu != pv && u > v) ++q.edge_cut;
      if (seen[pu] == v) continue;
      seen[pu] = v;
      ++q.send[pv];  // v's row goes to part pu
      ++q.recv[pu];
      ++q.total_volume;
    }
  }
  return q;
}

}  // namespace gcnlab

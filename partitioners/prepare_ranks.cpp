#include "partitioners/prepare_ranks.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include <omp.h>

#include <fmt/format.h>

#include "common/core/atomic_file.hpp"
#include "common/core/blocks.hpp"
#include "common/core/error.hpp"
#include "common/core/fingerprint.hpp"
#include "common/core/progress.hpp"
#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"
#include "common/data/line_reader.hpp"
#include "partitioners/permutation.hpp"
#include "partitioners/ptscotch.hpp"

namespace gcnlab {

namespace {

namespace fs = std::filesystem;

// fn(b) for b in [0, blocks) on the rank's threads; an error of any block is
// thrown after the loop (the lowest block's, so every run reports the same),
// as no exception may leave an OpenMP region.
void parallel_blocks(std::int64_t blocks, const std::function<void(std::int64_t)>& fn) {
  std::int64_t failed = blocks;
  std::string message;
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    try {
      fn(b);
    } catch (const std::exception& e) {
#pragma omp critical(prepare_ranks_error)
      if (b < failed) failed = b, message = e.what();
    }
  }
  if (failed < blocks) throw Error(message);
}

// Runs fn on every rank and agrees on its failure: when any rank fails, every
// rank throws the message of the lowest failing one (bad input found in the
// part of a file one rank reads is one error on every rank, not a hang).
void agreed(Communicator& comm, const std::function<void()>& fn) {
  std::string message;
  std::int64_t first = comm.size();
  try {
    fn();
  } catch (const Error& e) {
    message = e.what(), first = comm.rank();
  }
  comm.allreduce(std::span<std::int64_t>(&first, 1), ReduceOp::min, Category::allreduce);
  if (first == comm.size()) return;
  std::int64_t length = static_cast<std::int64_t>(message.size());
  comm.broadcast(std::span<std::int64_t>(&length, 1), static_cast<int>(first), Category::bcast_dense);
  std::vector<std::uint8_t> text(message.begin(), message.end());
  text.resize(static_cast<std::size_t>(length));
  comm.broadcast(std::span<std::uint8_t>(text), static_cast<int>(first), Category::bcast_dense);
  throw Error(std::string(text.begin(), text.end()));
}

// The shard row blocks (of K over n positions) that the run `r` overlaps.
BlockRange blocks_overlapping(std::int64_t n, int K, BlockRange r) {
  if (r.count == 0) return {0, 0};
  const std::int64_t i0 = block_of(n, K, r.first);
  return {i0, block_of(n, K, r.end() - 1) + 1 - i0};
}

// Who holds what: rank p owns the vertices vertices(p), a run cut where the
// prefix sums of the rows' entries come nearest to p/P of all (R-MAT's low
// ids hold most edges: equal vertex ranges would give rank 0 of 2 three
// quarters of them, and whole shard row blocks at 8 ranks a quarter of them
// to one rank). A run may cut shard row blocks, which its ranks then write
// together (write_positions).
class Owners {
 public:
  Owners(std::int64_t n, int K, int P, std::span<const std::int64_t> row_entries)
      : n_(n), K_(K), first_(static_cast<std::size_t>(P) + 1, n) {
    const double total = static_cast<double>(std::accumulate(row_entries.begin(), row_entries.end(), std::int64_t{0}));
    first_[0] = 0;
    std::int64_t v = 0, before = 0;  // entries of rows [0, v)
    for (int p = 1; p < P; ++p) {
      const double target = total * p / P;
      while (v < n && static_cast<double>(before + row_entries[v]) < target) before += row_entries[v++];
      // v is the first row whose end reaches the target: cut before or after it, whichever is nearer
      const bool after =
          v < n && static_cast<double>(before + row_entries[v]) - target < target - static_cast<double>(before);
      first_[p] = std::max(first_[p - 1], v + (after ? 1 : 0));
    }
  }
  int of(std::int64_t v) const {
    return static_cast<int>(std::upper_bound(first_.begin(), first_.end() - 1, v) - first_.begin()) - 1;
  }
  BlockRange vertices(int p) const { return {first_[p], first_[p + 1] - first_[p]}; }
  BlockRange blocks(int p) const { return blocks_overlapping(n_, K_, vertices(p)); }

 private:
  std::int64_t n_;
  int K_;
  std::vector<std::int64_t> first_;  // rank p's vertices: [first_[p], first_[p + 1])
};

// The draws rank `rank` of P reads: 1/P of them, or all of a stream on rank 0.
BlockRange draws_of(const EdgeDraws& g, int P, int rank) {
  if (!g.stream.empty()) return {0, rank == 0 ? g.draws : 0};
  return block_range(g.draws, P, rank);
}

// Draws [k0, k1) in `parts` blocks on the rank's threads (one block for a
// stream, read in order); fn(block, u, v) for each edge.
void draw_in_blocks(const EdgeDraws& g, std::int64_t k0, std::int64_t k1, std::int64_t parts,
                    const std::function<void(std::int64_t, std::int64_t, std::int64_t)>& fn) {
  if (!g.stream.empty() || g.serial) parts = 1;
  parallel_blocks(parts, [&](std::int64_t t) {
    const BlockRange part = block_range(k1 - k0, static_cast<int>(parts), static_cast<int>(t));
    g.draw(k0 + part.first, k0 + part.end(), [&](std::int64_t u, std::int64_t v) { fn(t, u, v); });
  });
}

// The entries each row of A (`out`) and, when directed, of Aᵀ (`in`) gets from
// every rank's draws, duplicates included: each rank draws its draws_of and
// counts, and the counts are summed. The edges read, self-loops included, are
// checked against what the source declares.
void count_entries(Communicator& comm, const EdgeDraws& g, std::vector<std::int64_t>& out,
                   std::vector<std::int64_t>& in) {
  const BlockRange mine = draws_of(g, comm.size(), comm.rank());
  out.assign(static_cast<std::size_t>(g.n), 0);
  in.assign(g.directed ? out.size() : 0, 0);
  std::int64_t* const from = out.data();
  std::int64_t* const to = (g.directed ? in : out).data();
  std::int64_t read = 0;
  constexpr std::int64_t kBlock = 1 << 14;
  agreed(comm, [&] {  // bad input (a line of a file) is found here, on the rank that reads it
    draw_in_blocks(g, mine.first, mine.end(), (mine.count + kBlock - 1) / kBlock,
                   [&](std::int64_t, std::int64_t u, std::int64_t v) {
#pragma omp atomic
                     ++read;
                     if (u == v) return;
#pragma omp atomic
                     ++from[u];
#pragma omp atomic
                     ++to[v];
                   });
  });
  comm.allreduce(std::span<std::int64_t>(out), ReduceOp::sum, Category::allreduce);
  if (g.directed) comm.allreduce(std::span<std::int64_t>(in), ReduceOp::sum, Category::allreduce);
  comm.allreduce(std::span<std::int64_t>(&read, 1), ReduceOp::sum, Category::allreduce);
  if (g.check_edges) g.check_edges(read);  // the same total on every rank: the same error on every rank
}

std::int64_t row_length(const HostCsr& m, std::int64_t i) { return m.rowptr[i + 1] - m.rowptr[i]; }

// `step` run by the ranks in turn, each on the `carry` the rank before it left
// (rank 0 on the one it was given); the last rank's carry is the result.
template <class T>
void in_turn(Communicator& comm, std::vector<T>& carry, const std::function<void(std::vector<T>&)>& step) {
  const int me = comm.rank();
  if (me > 0) comm.exchange<T>({}, {{me - 1, carry.data(), carry.size()}}, Category::p2p);
  step(carry);
  if (me + 1 < comm.size()) comm.exchange<T>({{me + 1, carry.data(), carry.size()}}, {}, Category::p2p);
}

// A personalised exchange: `send` holds `count[p]` items for each peer p in
// peer order; returns what the peers sent this rank, in peer order.
template <class T>
std::vector<T> exchange_by_peer(Communicator& comm, std::span<const T> send, std::span<const std::int64_t> count) {
  const int P = comm.size();
  std::vector<std::int64_t> displ(P), recv_count(P), recv_displ(P), one(P, 1), each(P);
  std::iota(each.begin(), each.end(), 0);
  std::exclusive_scan(count.begin(), count.end(), displ.begin(), std::int64_t{0});
  comm.alltoallv<std::int64_t>(count, one, each, recv_count, one, each, Category::alltoall);
  std::exclusive_scan(recv_count.begin(), recv_count.end(), recv_displ.begin(), std::int64_t{0});
  std::vector<T> recv(static_cast<std::size_t>(recv_displ[P - 1] + recv_count[P - 1]));
  comm.alltoallv<T>(send, count, displ, recv, recv_count, recv_displ, Category::alltoall);
  return recv;
}

// Each rank's run of a vertex array, gathered whole on every rank (runs in rank order).
template <class T>
std::vector<T> gather_runs(Communicator& comm, std::span<const T> mine) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(comm.size()));
  const auto count = static_cast<std::int64_t>(mine.size());
  comm.allgather(std::span<const std::int64_t>(&count, 1), std::span<std::int64_t>(counts), Category::allgather);
  std::vector<T> all(static_cast<std::size_t>(std::accumulate(counts.begin(), counts.end(), std::int64_t{0})));
  comm.allgather(mine, std::span<T>(all), counts, Category::allgather);
  return all;
}

// Every entry the draws put in rows of A (of Aᵀ when `transposed`; both
// directions when undirected), handed to `consume` on the rank that owns the
// row as (row, column) pairs. Each rank draws its draws_of, in rounds of
// `chunk` draws (every rank takes part in every round).
void route_entries(Communicator& comm, const EdgeDraws& g, const Owners& owners, bool transposed, std::int64_t chunk,
                   const std::function<void(std::span<const std::int64_t>)>& consume) {
  const int P = comm.size();
  const BlockRange mine = draws_of(g, P, comm.rank());
  std::int64_t rounds = (mine.count + chunk - 1) / chunk;
  comm.allreduce(std::span<std::int64_t>(&rounds, 1), ReduceOp::max, Category::alltoall);
  std::vector<std::vector<std::int64_t>> drawn(static_cast<std::size_t>(omp_get_max_threads()));
  std::vector<std::int64_t> send, count(P), next(P);
  for (std::int64_t r = 0; r < rounds; ++r) {
    const std::int64_t k0 = mine.first + std::min(mine.count, r * chunk);
    const std::int64_t k1 = mine.first + std::min(mine.count, (r + 1) * chunk);
    for (auto& d : drawn) d.clear();
    draw_in_blocks(g, k0, k1, static_cast<std::int64_t>(drawn.size()), [&](std::int64_t t, std::int64_t u, std::int64_t v) {
      if (u == v) return;
      if (transposed) std::swap(u, v);
      std::vector<std::int64_t>& out = drawn[static_cast<std::size_t>(t)];
      out.insert(out.end(), {u, v});
      if (!g.directed) out.insert(out.end(), {v, u});
    });
    std::fill(count.begin(), count.end(), 0);
    for (const auto& d : drawn)
      for (std::size_t k = 0; k < d.size(); k += 2) count[owners.of(d[k])] += 2;
    std::exclusive_scan(count.begin(), count.end(), next.begin(), std::int64_t{0});
    send.resize(static_cast<std::size_t>(next[P - 1] + count[P - 1]));
    for (const auto& d : drawn)
      for (std::size_t k = 0; k < d.size(); k += 2) {
        std::int64_t& at = next[owners.of(d[k])];
        send[at] = d[k], send[at + 1] = d[k + 1];
        at += 2;
      }
    consume(exchange_by_peer<std::int64_t>(comm, send, count));
  }
}

// This rank's rows of A (of Aᵀ when `transposed`) as csr_from_edge_passes
// builds them, from the counts of every row's entries (count_entries): each
// row placed, sorted, its duplicates dropped, room kept for the diagonal.
HostCsr gather_rows(Communicator& comm, const EdgeDraws& g, const Owners& owners, bool transposed,
                    std::span<const std::int64_t> entries, std::int64_t chunk) {
  const BlockRange rows = owners.vertices(comm.rank());
  HostCsr m;
  m.rows = rows.count;
  m.cols = g.n;
  m.rowptr.assign(static_cast<std::size_t>(rows.count) + 1, 0);
  for (std::int64_t i = 0; i < rows.count; ++i) m.rowptr[i + 1] = m.rowptr[i] + entries[rows.first + i];
  m.col.reserve(static_cast<std::size_t>(m.rowptr.back() + rows.count));
  m.col.resize(static_cast<std::size_t>(m.rowptr.back()));
  std::vector<std::int64_t> next(m.rowptr.begin(), m.rowptr.end() - 1);
  route_entries(comm, g, owners, transposed, chunk, [&](std::span<const std::int64_t> e) {
    for (std::size_t k = 0; k < e.size(); k += 2) {
      const std::int64_t i = e[k] - rows.first;
      if (next[i] < m.rowptr[i + 1]) m.col[next[i]] = e[k + 1];
      ++next[i];
    }
  });
  for (std::int64_t i = 0; i < rows.count; ++i)
    GCNLAB_CHECK(next[i] == m.rowptr[i + 1], "an edge source gave different edges on its second pass");
  std::vector<std::int64_t>().swap(next);
  compact_rows(m, rows.count);
  return m;
}

// dataset_info's statistics from the rows of A a rank holds, and the same rows
// of Aᵀ (the same object when undirected): u -> v with v < u counts as an
// undirected pair when v -> u is absent, that is when v is not in Aᵀ's row u.
DatasetInfo info_of(Communicator& comm, const HostCsr& a, const HostCsr& a_t, std::int64_t first, std::int64_t n) {
  std::int64_t sum[3] = {a.nnz(), 0, 0};  // nonzeros, isolated vertices, undirected pairs
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const std::int64_t u = first + i, degree = row_length(a, i);
    lo = std::min(lo, degree), hi = std::max(hi, degree);
    sum[1] += degree == 0;
    const auto in_first = a_t.col.begin() + a_t.rowptr[i], in_last = a_t.col.begin() + a_t.rowptr[i + 1];
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k) {
      const std::int64_t v = a.col[k];
      if (v > u) ++sum[2];
      else if (v < u) sum[2] += !std::binary_search(in_first, in_last, v);
    }
  }
  comm.allreduce(std::span<std::int64_t>(sum), ReduceOp::sum, Category::allreduce);
  comm.allreduce(std::span<std::int64_t>(&lo, 1), ReduceOp::min, Category::allreduce);
  comm.allreduce(std::span<std::int64_t>(&hi, 1), ReduceOp::max, Category::allreduce);
  return {n, sum[0], sum[0] + n, sum[2], lo, hi, static_cast<double>(sum[0]) / n, sum[1]};
}

// add_synthetic_vertex_data's labels of this rank's vertices: the place of
// vertex v in the stable order by degree is the vertices of lower degree plus
// those of v's degree and a lower id, which the ranks before it count.
std::vector<std::int32_t> degree_bucket_labels(Communicator& comm, const HostCsr& a, std::int64_t n, int classes,
                                               std::int64_t max_degree) {
  std::vector<std::int64_t> mine(static_cast<std::size_t>(max_degree) + 1, 0), place(mine.size(), 0);
  for (std::int64_t i = 0; i < a.rows; ++i) ++mine[row_length(a, i)];
  std::vector<std::int64_t> lower = mine;  // of any rank, then the degrees below each degree
  comm.allreduce(std::span<std::int64_t>(lower), ReduceOp::sum, Category::allreduce);
  std::exclusive_scan(lower.begin(), lower.end(), lower.begin(), std::int64_t{0});
  in_turn<std::int64_t>(comm, place, [&](std::vector<std::int64_t>& before) {
    for (std::size_t d = 0; d < mine.size(); ++d) {
      const std::int64_t ahead = before[d];
      before[d] += mine[d];
      mine[d] = lower[d] + ahead;  // the first place of this rank's vertices of degree d
    }
  });
  std::vector<std::int32_t> labels(static_cast<std::size_t>(a.rows));
  for (std::int64_t i = 0; i < a.rows; ++i) labels[i] = degree_bucket(mine[row_length(a, i)]++, classes, n);
  return labels;
}

// dataset_fingerprint of the whole dataset, from the parts the ranks hold: the
// stream's sections (shape and row offsets, columns, labels, split and seed)
// fed by the ranks in turn. Every rank returns it.
std::string fingerprint_of(Communicator& comm, const Dataset& facts, const HostCsr& a,
                           std::span<const std::int32_t> labels, std::span<const std::uint8_t> split) {
  const int P = comm.size(), me = comm.rank();
  std::vector<std::int64_t> nnz(static_cast<std::size_t>(P));
  const std::int64_t my_nnz = a.nnz();
  comm.allgather(std::span<const std::int64_t>(&my_nnz, 1), std::span<std::int64_t>(nnz), Category::allgather);
  const std::int64_t before = std::accumulate(nnz.begin(), nnz.begin() + me, std::int64_t{0});
  Fingerprint h;
  std::vector<std::uint8_t> carry(h.state().size());
  auto section = [&](const std::function<void(Fingerprint&)>& add) {
    const std::vector<std::byte> start = h.state();
    std::memcpy(carry.data(), start.data(), carry.size());
    in_turn<std::uint8_t>(comm, carry, [&](std::vector<std::uint8_t>& state) {
      h.restore(std::as_bytes(std::span(state)));
      add(h);
      const std::vector<std::byte> s = h.state();
      std::memcpy(state.data(), s.data(), state.size());
    });
    comm.broadcast(std::span<std::uint8_t>(carry), P - 1, Category::bcast_dense);
    h.restore(std::as_bytes(std::span(carry)));
  };
  section([&](Fingerprint& f) {
    if (me == 0) {
      const std::int64_t shape[] = {a.cols, facts.features, facts.classes, facts.directed, 0};
      f.add_values(std::span<const std::int64_t>(shape));  // the last: row 0's offset
    }
    std::vector<std::int64_t> ends(static_cast<std::size_t>(a.rows));
    for (std::int64_t i = 0; i < a.rows; ++i) ends[i] = before + a.rowptr[i + 1];
    f.add_values(std::span<const std::int64_t>(ends));
  });
  section([&](Fingerprint& f) { f.add_values(std::span<const std::int64_t>(a.col)); });
  section([&](Fingerprint& f) { f.add_values(labels); });
  section([&](Fingerprint& f) {
    f.add_values(split);
    if (me == P - 1 && facts.synthetic_features) {
      const std::uint64_t seed = facts.feature_seed;
      f.add_values(std::span<const std::uint64_t>(&seed, 1)).add_values(std::span<const float>(&facts.class_signal, 1));
    }
  });
  return h.hex();
}

// Âᵀ's rows in the storage of Aᵀ's: the diagonal added, then
// Âᵀ_vu = Â_uv = d_u^-1/2 d_v^-1/2 with d the row lengths of A + I, as
// normalized_graph computes them (the product is the same either way round).
void normalize_rows(Communicator& comm, HostCsr& a_t, std::int64_t first, std::span<const std::int64_t> out_degree) {
  std::vector<double> local(out_degree.size());
  for (std::size_t i = 0; i < local.size(); ++i) local[i] = 1.0 / std::sqrt(static_cast<double>(out_degree[i] + 1));
  const std::vector<double> inv_sqrt = gather_runs<double>(comm, local);
  add_self_loops(a_t, first);
  for (std::int64_t i = 0; i < a_t.rows; ++i)
    for (std::int64_t k = a_t.rowptr[i]; k < a_t.rowptr[i + 1]; ++k)
      a_t.val[k] = static_cast<float>(inv_sqrt[first + i] * inv_sqrt[a_t.col[k]]);
}

// Entries of the shard writer's chunk: a quarter of one process's default, as
// a rank's share of the graph is a fraction of it.
constexpr std::int64_t kShardChunk = std::int64_t{1} << 20;

// One file written by every rank at its offset (items [first, first + part.size())
// of `total`): made at its full size by rank 0 and moved into place when every
// rank's part is in (PartFile).
template <class T>
void write_by_ranges(Communicator& comm, const std::string& path, std::span<const T> part, std::int64_t first,
                     std::int64_t total) {
  if (comm.rank() == 0) PartFile::create(path, total * static_cast<std::int64_t>(sizeof(T)));
  comm.barrier();
  if (!part.empty()) {
    PartFile f(path);
    f.write_at(first * static_cast<std::int64_t>(sizeof(T)), part);
    f.close();
  }
  comm.barrier();
  if (comm.rank() == 0) PartFile::commit(path);
}

// One version's shards, positions `mine` of them from `rows` on this rank
// (every rank calls it, the positions in rank order covering [0, n)). A row
// block within `mine` is written whole; one that `mine` cuts is shared with
// the ranks beside it, each writing its part at its offsets: the entries of
// every rank's first and last part are allgathered (2K a rank), which gives
// each part the entries before it and each shard its total. A block's first
// writer creates its files before any part is written, and commits them after.
void write_positions(Communicator& comm, const ShardRows& rows, BlockRange mine, std::int64_t n, int K,
                     std::array<int, 2> version, const std::string& dir, Progress& progress) {
  const int P = comm.size(), me = comm.rank();
  ShardWriter writer(rows, n, K, version, dir, kShardChunk);
  const BlockRange blocks = blocks_overlapping(n, K, mine);
  auto part_of = [&](std::int64_t i) {  // this rank's positions of row block i
    const BlockRange b = block_range(n, K, static_cast<int>(i));
    const std::int64_t first = std::max(b.first, mine.first), end = std::min(b.end(), mine.end());
    return std::pair{first, end};
  };
  auto whole = [&](std::int64_t i) {
    const BlockRange b = block_range(n, K, static_cast<int>(i));
    return part_of(i) == std::pair{b.first, b.end()};
  };
  auto first_writer = [&](std::int64_t i) { return part_of(i).first == block_range(n, K, static_cast<int>(i)).first; };
  // per rank: whether it holds positions, its first and last block, their parts' entries
  const auto stride = static_cast<std::size_t>(3 + 2 * K);
  std::vector<std::int64_t> sent(stride, 0), all(stride * static_cast<std::size_t>(P));
  if (blocks.count > 0) {
    sent[0] = 1, sent[1] = blocks.first, sent[2] = blocks.end() - 1;
    for (const int side : {0, 1}) {
      const std::int64_t i = side == 0 ? blocks.first : blocks.end() - 1;
      if (whole(i)) continue;  // no other rank writes it
      const auto [first, end] = part_of(i);
      const std::vector<std::int64_t> e = writer.entries(static_cast<int>(i), first, end);
      std::copy(e.begin(), e.end(), sent.begin() + 3 + side * K);
    }
  }
  comm.allgather(std::span<const std::int64_t>(sent), std::span<std::int64_t>(all), Category::allgather);
  struct Shared {
    std::int64_t block;
    std::vector<std::int64_t> before, total;
  };
  std::vector<Shared> shared;  // this rank's cut blocks: its first, its last (or one, both)
  for (const int side : {0, 1}) {
    const std::int64_t i = side == 0 ? blocks.first : blocks.end() - 1;
    if (blocks.count == 0 || whole(i) || (!shared.empty() && shared.back().block == i)) continue;
    const auto mine_first = sent.begin() + 3 + side * K;  // this rank's entries of it, as sent
    Shared s{i, std::vector<std::int64_t>(static_cast<std::size_t>(K), 0), {mine_first, mine_first + K}};
    for (int q = 0; q < P; ++q) {  // the ranks before whose last block it is, the ranks after whose first block it is
      const std::int64_t* r = all.data() + stride * static_cast<std::size_t>(q);
      if (q == me || r[0] == 0) continue;
      const std::int64_t* e = q < me && r[2] == i ? r + 3 + K : q > me && r[1] == i ? r + 3 : nullptr;
      if (!e) continue;
      for (int j = 0; j < K; ++j) {
        if (q < me) s.before[j] += e[j];
        s.total[j] += e[j];
      }
    }
    if (first_writer(i)) writer.create(static_cast<int>(i), s.total);
    shared.push_back(std::move(s));
  }
  comm.barrier();  // every cut block's files made
  for (std::int64_t i = blocks.first; i < blocks.end(); ++i) {
    const auto found = std::find_if(shared.begin(), shared.end(), [&](const Shared& s) { return s.block == i; });
    if (found == shared.end()) {
      writer.write_block(static_cast<int>(i), progress);
    } else {
      const auto [first, end] = part_of(i);
      writer.write_part(static_cast<int>(i), first, end, found->before, found->total, progress);
    }
  }
  comm.barrier();  // every part written
  for (const Shared& s : shared)
    if (first_writer(s.block)) writer.commit(static_cast<int>(s.block));
}

// Rows of Âᵀ laid out in an ordering: `rows` holds positions [positions.first,
// positions.end()).
struct PositionRows {
  HostCsr rows;
  BlockRange positions;
};

// Âᵀ's rows moved from the owners of their vertices (this rank: `hat`, rows
// from `first`) to the owners of their positions in `order` (runs of
// positions cut by entries, as Owners cuts them), in rounds of about `chunk` entries a
// rank. `length`: every vertex's row length. A row is sent as its position
// and columns (int64) and its values (float).
PositionRows move_rows(Communicator& comm, const HostCsr& hat, std::int64_t first, std::span<const std::int64_t> order,
                       std::span<const std::int64_t> length, int K, std::int64_t chunk) {
  const int P = comm.size();
  const auto n = static_cast<std::int64_t>(order.size());
  std::vector<std::int64_t> at(static_cast<std::size_t>(n));  // the position of each vertex
  for (std::int64_t q = 0; q < n; ++q) at[order[q]] = q;
  std::vector<std::int64_t> weight(static_cast<std::size_t>(n));
  for (std::int64_t q = 0; q < n; ++q) weight[q] = length[order[q]];
  const Owners owners(n, K, P, weight);
  std::vector<std::int64_t>().swap(weight);
  PositionRows out{{}, owners.vertices(comm.rank())};
  HostCsr& m = out.rows;
  m.rows = out.positions.count;
  m.cols = n;
  m.rowptr.assign(static_cast<std::size_t>(m.rows) + 1, 0);
  for (std::int64_t k = 0; k < m.rows; ++k) m.rowptr[k + 1] = m.rowptr[k] + length[order[out.positions.first + k]];
  m.col.resize(static_cast<std::size_t>(m.rowptr.back()));
  m.val.resize(m.col.size());

  std::vector<std::int64_t> round_end;  // this rank's rows in rounds
  for (std::int64_t i = 0; i < hat.rows;) {
    const std::int64_t start = hat.rowptr[i];
    while (i < hat.rows && (hat.rowptr[i + 1] - start <= chunk || hat.rowptr[i] == start)) ++i;
    round_end.push_back(i);
  }
  std::int64_t rounds = static_cast<std::int64_t>(round_end.size());
  comm.allreduce(std::span<std::int64_t>(&rounds, 1), ReduceOp::max, Category::alltoall);
  std::vector<std::int64_t> ints, int_count(P), int_next(P), val_count(P), val_next(P);
  std::vector<float> vals;
  for (std::int64_t r = 0, i0 = 0; r < rounds; ++r) {
    const std::int64_t i1 = r < static_cast<std::int64_t>(round_end.size()) ? round_end[r] : i0;
    std::fill(int_count.begin(), int_count.end(), 0);
    std::fill(val_count.begin(), val_count.end(), 0);
    for (std::int64_t i = i0; i < i1; ++i) {
      const int to = owners.of(at[first + i]);
      int_count[to] += 1 + row_length(hat, i);
      val_count[to] += row_length(hat, i);
    }
    std::exclusive_scan(int_count.begin(), int_count.end(), int_next.begin(), std::int64_t{0});
    std::exclusive_scan(val_count.begin(), val_count.end(), val_next.begin(), std::int64_t{0});
    ints.resize(static_cast<std::size_t>(int_next[P - 1] + int_count[P - 1]));
    vals.resize(static_cast<std::size_t>(val_next[P - 1] + val_count[P - 1]));
    for (std::int64_t i = i0; i < i1; ++i) {
      const std::int64_t q = at[first + i];
      const int to = owners.of(q);
      ints[int_next[to]++] = q;
      for (std::int64_t k = hat.rowptr[i]; k < hat.rowptr[i + 1]; ++k) {
        ints[int_next[to]++] = hat.col[k];
        vals[val_next[to]++] = hat.val[k];
      }
    }
    const std::vector<std::int64_t> recv_ints = exchange_by_peer<std::int64_t>(comm, ints, int_count);
    const std::vector<float> recv_vals = exchange_by_peer<float>(comm, vals, val_count);
    for (std::size_t a = 0, b = 0; a < recv_ints.size();) {  // position, then its row's columns; values alike
      const std::int64_t k = recv_ints[a++] - out.positions.first, len = row_length(m, k);
      GCNLAB_ASSERT(0 <= k && k < m.rows);
      std::copy_n(recv_ints.begin() + static_cast<std::ptrdiff_t>(a), len, m.col.begin() + m.rowptr[k]);
      std::copy_n(recv_vals.begin() + static_cast<std::ptrdiff_t>(b), len, m.val.begin() + m.rowptr[k]);
      a += static_cast<std::size_t>(len), b += static_cast<std::size_t>(len);
    }
    i0 = i1;
  }
  return out;
}

std::vector<std::int64_t> iota_vector(std::int64_t first, std::int64_t count) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(count));
  std::iota(v.begin(), v.end(), first);
  return v;
}

}  // namespace

bool prepares_across_ranks(const std::string& spec, const VertexPlan& plan) {
  const DatasetSpec source = parse_dataset_spec(spec);
  const std::string& kind = source.kind;
  const bool splits = kind == "rmat" || kind == "sbm" || kind == "edges" || kind == "mtx" || kind == "ogb";
  const bool laid_out = plan.parts == 0 ? plan.partitioner == "block" || plan.partitioner == "random"
                                        : !partition_needs_graph(plan.partitioner);
  return splits && laid_out;
}

namespace {

// A source prepared across ranks: its edges by ranges, its dataset's facts
// (name, features, classes, seed), its labels and split where it gives them
// per vertex (else degree buckets and the synthetic split), and its stored
// features where it has them (written by one reader, streamed). A stream's
// lines are counted first (by rank 0), and an edge list without nodes=N is
// scanned, each rank its draws, for its largest id and its edges. OGB's
// vertex data is read by rank 0 and broadcast (5 bytes a vertex).
struct Source {
  EdgeDraws g;
  Dataset facts;
  VertexLabels labels;
  std::function<void(const std::string& path)> write_features;  // null: synthetic features
};

// OGB's csv form: rank 0 reads the vertex data (n, the features' width, labels, split), every rank gets it.
Source ogb_source(Communicator& comm, const DatasetSpec& source, const std::string& spec) {
  Source s{{}, ogb_vertex_facts(source), {}, [source](const std::string& path) { write_ogb_features(source, path); }};
  Dataset read = s.facts;
  read.spec = spec;
  std::int64_t facts[3] = {0, 0, 0};  // n, features, classes
  agreed(comm, [&] {
    if (comm.rank() == 0) facts[0] = read_ogb_vertex_data(source, read), facts[1] = read.features, facts[2] = read.classes;
  });
  comm.broadcast(std::span<std::int64_t>(facts), 0, Category::bcast_dense);
  const std::int64_t n = facts[0];
  s.facts.features = facts[1], s.facts.classes = static_cast<int>(facts[2]);
  auto labels = std::make_shared<std::vector<std::int32_t>>(std::move(read.labels));
  auto split = std::make_shared<std::vector<std::uint8_t>>(std::move(read.split));
  labels->resize(static_cast<std::size_t>(n)), split->resize(static_cast<std::size_t>(n));
  comm.broadcast(std::span<std::int32_t>(*labels), 0, Category::bcast_dense);
  comm.broadcast(std::span<std::uint8_t>(*split), 0, Category::bcast_dense);
  s.labels = {[labels](std::int64_t v) { return (*labels)[v]; }, [split](std::int64_t v) { return (*split)[v]; }};
  s.g = ogb_edge_draws(source, n);
  return s;
}

Source source_of(Communicator& comm, const std::string& spec) {
  const DatasetSpec source = parse_dataset_spec(spec);
  Source s;
  if (source.kind == "ogb") s = ogb_source(comm, source, spec);
  else if (source.kind == "sbm") s = {sbm_draws(source), sbm_vertex_facts(source), sbm_vertex_labels(source), {}};
  else if (source.kind == "rmat") s = {rmat_draws(source), rmat_vertex_facts(source), {}, {}};
  else if (source.kind == "mtx") s = {matrix_market_draws(source), matrix_market_vertex_facts(source), {}, {}};
  else s = {edge_list_draws(source), edge_list_vertex_facts(source), {}, {}};
  if (!s.labels.split)
    s.labels.split = [seed = s.facts.feature_seed](std::int64_t v) {
      return random_split(v, kSyntheticTrain, kSyntheticVal, seed);
    };
  auto count_lines = [&](EdgeDraws& g) {
    if (g.draws >= 0) return;
    agreed(comm, [&] { g.draws = comm.rank() == 0 ? LineStream::count(g.stream) : 0; });
    comm.broadcast(std::span<std::int64_t>(&g.draws, 1), 0, Category::bcast_dense);
  };
  count_lines(s.g);
  if (s.g.n < 0) {
    const BlockRange mine = draws_of(s.g, comm.size(), comm.rank());
    EdgeScan scan;
    agreed(comm, [&] { scan = edge_list_scan(source, mine.first, mine.end()); });
    std::int64_t max_id = scan.max_id;
    comm.allreduce(std::span<std::int64_t>(&max_id, 1), ReduceOp::max, Category::allreduce);
    comm.allreduce(std::span<std::int64_t>(&scan.edges, 1), ReduceOp::sum, Category::allreduce);
    s.g = edge_list_draws(source, edge_list_nodes(source.args.at("path"), max_id, scan.edges));
    count_lines(s.g);
  }
  s.facts.directed = s.g.directed;
  return s;
}

// Whether every row of `a` holds the columns of the same row of `a_t` (A is
// structurally symmetric), on every rank.
bool symmetric_rows(Communicator& comm, const HostCsr& a, const HostCsr& a_t) {
  std::int64_t same = a.rowptr == a_t.rowptr;
  for (std::int64_t i = 0; same && i < a.rows; ++i)
    same = std::equal(a.col.begin() + a.rowptr[i], a.col.begin() + a.rowptr[i + 1], a_t.col.begin() + a_t.rowptr[i]);
  comm.allreduce(std::span<std::int64_t>(&same, 1), ReduceOp::min, Category::allreduce);
  return same == 1;
}

// The vertex layout's partition (--parts K) on every rank, and its quality
// report: from every vertex's row length in A (block, block-nnz, random, a
// partition file: partition_by_lengths, as one process computes it), or by
// PT-Scotch on the ranks' rows of the symmetrised structure, gathered. The
// quality is summed from each rank's rows (quality_of_rows).
struct LaidOut {
  Partition partition;
  nlohmann::json report;
};

LaidOut partition_across_ranks(MpiCommunicator& comm, const VertexPlan& plan, const HostCsr& a, const HostCsr* a_t,
                               std::int64_t first, std::int64_t n, std::span<const std::int64_t> out_degree) {
  const auto t0 = std::chrono::steady_clock::now();
  // the symmetrised rows: A's own when undirected (no self-loops), merged with Aᵀ's when directed
  const HostCsr merged = a_t ? union_rows(a, *a_t, first) : HostCsr{};
  const HostCsr& sym = a_t ? merged : a;
  LaidOut out;
  Partition& p = out.partition;
  agreed(comm, [&] {  // a partition file that does not fit is one error on every rank
    if (plan.partitioner == "ptscotch") {
      const PartitionBlock b =
          ptscotch_partition(sym, {first, a.rows}, n, plan.parts, 0.03, plan.seed, comm.native());
      p.parts = plan.parts;
      p.part = gather_runs<std::int32_t>(comm, b.part);
      check_partition(p, n, "ptscotch");
    } else {
      p = partition_by_lengths(plan.partitioner, gather_runs<std::int64_t>(comm, out_degree), plan.parts, plan.seed);
    }
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  PartitionQuality q = quality_of_rows(sym, first, out_degree, p);
  for (auto* v : {&q.send, &q.recv, &q.size, &q.nnz})
    comm.allreduce(std::span<std::int64_t>(*v), ReduceOp::sum, Category::allreduce);
  std::int64_t counts[] = {q.edge_cut, q.total_volume};
  comm.allreduce(std::span<std::int64_t>(counts), ReduceOp::sum, Category::allreduce);
  q.edge_cut = counts[0], q.total_volume = counts[1];
  out.report = partition_report(q, seconds);
  return out;
}

}  // namespace

ShardMeta prepare_across_ranks(MpiCommunicator& comm, const std::string& spec, const VertexPlan& plan, int K,
                              const std::string& dir, std::int64_t chunk) {
  GCNLAB_ASSERT(prepares_across_ranks(spec, plan) && chunk >= 1);
  Source source = source_of(comm, spec);
  const EdgeDraws& g = source.g;
  Dataset& facts = source.facts;
  facts.spec = spec;
  const VertexLabels& given = source.labels;
  const std::int64_t n = g.n;
  GCNLAB_CHECK(K >= 1 && K <= n, "--shards {}x{}: cannot cut {} vertices into {} blocks", K, K, n, K);
  // The split is the vertices' alone: checked before any work, as is --out.
  std::array<std::int64_t, 4> split_counts{};
  const BlockRange some = block_range(n, comm.size(), comm.rank());
  for (std::int64_t v = some.first; v < some.end(); ++v)
    ++split_counts[given.split(v)];
  comm.allreduce(std::span<std::int64_t>(split_counts), ReduceOp::sum, Category::allreduce);
  GCNLAB_CHECK(split_counts[ew::kTrain] > 0, "dataset '{}' has no training vertices", spec);
  agreed(comm, [&] {
    if (comm.rank() == 0) check_shard_destination(dir);
  });

  // 1. rows of A, and of Aᵀ when they differ, on ranks that own about equal shares of them
  std::vector<std::int64_t> out_entries, in_entries;
  count_entries(comm, g, out_entries, in_entries);
  std::vector<std::int64_t> weight = out_entries;
  for (std::size_t v = 0; v < in_entries.size(); ++v) weight[v] += in_entries[v];
  agreed(comm, [&] {  // the input was read whole without error: the directory is made
    if (comm.rank() == 0) start_shard_directory(dir, n, K);
  });
  const Owners owners(n, K, comm.size(), weight);
  std::vector<std::int64_t>().swap(weight);
  const BlockRange rows = owners.vertices(comm.rank()), blocks = owners.blocks(comm.rank());
  HostCsr a = gather_rows(comm, g, owners, false, out_entries, chunk);
  std::vector<std::int64_t>().swap(out_entries);
  HostCsr a_t = g.directed ? gather_rows(comm, g, owners, true, in_entries, chunk) : HostCsr{};
  std::vector<std::int64_t>().swap(in_entries);
  // a 'general' Matrix Market file of symmetric structure is undirected (as
  // loaded); its rows were cut by the same weights either way
  if (g.undirected_if_symmetric && symmetric_rows(comm, a, a_t)) facts.directed = false, a_t = HostCsr{};
  const bool directed = facts.directed;
  const HostCsr& in = directed ? a_t : a;

  // 2. vertex data and facts
  const DatasetInfo info = info_of(comm, a, in, rows.first, n);
  std::vector<std::int32_t> labels(static_cast<std::size_t>(rows.count));
  if (given.label)
    for (std::int64_t i = 0; i < rows.count; ++i) labels[i] = given.label(rows.first + i);
  else
    labels = degree_bucket_labels(comm, a, n, facts.classes, info.degree_max);
  std::vector<std::uint8_t> split(static_cast<std::size_t>(rows.count));
  for (std::int64_t i = 0; i < rows.count; ++i)
    split[i] = given.split(rows.first + i);
  const std::string fingerprint = fingerprint_of(comm, facts, a, labels, split);
  std::vector<std::int64_t> out_degree(static_cast<std::size_t>(rows.count)), in_degree(out_degree.size());
  for (std::int64_t i = 0; i < rows.count; ++i) out_degree[i] = row_length(a, i), in_degree[i] = row_length(in, i);
  std::optional<LaidOut> laid_out;  // --parts K
  if (plan.parts > 0)
    laid_out = partition_across_ranks(comm, plan, a, directed ? &a_t : nullptr, rows.first, n, out_degree);

  // 3. Âᵀ's rows, in the storage of Aᵀ's
  HostCsr hat = directed ? std::move(a_t) : std::move(a);
  a = HostCsr{};
  normalize_rows(comm, hat, rows.first, out_degree);

  // 4. the directory (made once the input was read): vertex files by ranges, shards by row blocks, meta.json last
  auto file = [&](const std::string& name) { return (fs::path(dir) / name).string(); };
  write_by_ranges<std::int32_t>(comm, file("labels.bin"), labels, rows.first, n);
  write_by_ranges<std::uint8_t>(comm, file("split.bin"), split, rows.first, n);
  write_by_ranges<std::int64_t>(comm, file("degrees.bin"), in_degree, rows.first, n);
  if (source.write_features)  // stored features, streamed by rank 0 (its checks passed when it read them first)
    agreed(comm, [&] {
      if (comm.rank() == 0) source.write_features(file("x.bin"));
    });
  GraphLayout layout;
  layout.partitioner = plan.partitioner;
  layout.seed = plan.seed;
  layout.permutation = to_string(plan.permutation);
  layout.versions = adjacency_versions(plan.permutation);
  std::vector<std::int64_t> base;  // ordering 0; empty: the identity
  if (laid_out) {
    layout.parts = plan.parts;
    layout.blocks = laid_out->partition.offsets();
    base = laid_out->partition.order();
    if (std::is_sorted(base.begin(), base.end())) base.clear();
  } else if (plan.partitioner != "block") {
    base = unpartitioned_order(plan, n);
  }
  if (base.empty() && plan.permutation.kind == Permutation::none) {
    // position q holds vertex q: each rank writes the rows it built (no ordering is held)
    write_by_ranges<std::int64_t>(comm, file("order0.bin"), iota_vector(rows.first, rows.count), rows.first, n);
    Progress progress(fmt::format("writing {} x {} shards to {} ({} row blocks on this rank)", K, K, dir, blocks.count),
                      static_cast<double>(blocks.count) * K, "shards");
    write_positions(comm, {hat, rows.first, {}, rows.first, {}}, rows, n, K, layout.versions.front(), dir, progress);
  } else {
    // The orderings, computed alike on every rank from n-long arrays of every vertex's lengths.
    std::vector<std::int64_t> length = gather_runs<std::int64_t>(comm, in_degree);  // Âᵀ's rows: + the diagonal
    for (auto& l : length) ++l;
    if (base.empty()) base = iota_vector(0, n);
    std::vector<std::vector<std::int64_t>> orderings{std::move(base)};
    if (plan.permutation.kind != Permutation::none) {
      std::vector<std::int64_t> weight = gather_runs<std::int64_t>(comm, out_degree);  // Âᵀ's columns, less 1
      for (std::int64_t v = 0; v < n; ++v) weight[v] += 1 + length[v];
      orderings = permuted_orderings(orderings.front(), weight, plan);
    }
    layout.orderings = static_cast<int>(orderings.size());
    for (int id = 0; id < layout.orderings; ++id)
      write_by_ranges<std::int64_t>(comm, file(fmt::format("order{}.bin", id)),
                                    std::span<const std::int64_t>(orderings[id]).subspan(rows.first, rows.count),
                                    rows.first, n);
    Progress progress(fmt::format("writing {} x {} shards of {} versions to {}", K, K, layout.versions.size(), dir),
                      static_cast<double>(layout.versions.size()) * K * K / comm.size(), "shards");
    for (const auto& [r, c] : layout.versions) {
      const PositionRows moved = move_rows(comm, hat, rows.first, orderings[r], length, K, chunk);
      write_positions(comm, {moved.rows, moved.positions.first, {}, moved.positions.first, orderings[c]},
                      moved.positions, n, K, {r, c}, dir, progress);
    }
  }
  comm.barrier();
  ShardMeta meta = shard_meta_of(facts, info, fingerprint, layout, K, laid_out ? laid_out->report : nlohmann::json());
  meta.split_counts = split_counts;
  if (comm.rank() == 0) finish_shard_directory(dir, meta);
  return meta;
}

}  // namespace gcnlab

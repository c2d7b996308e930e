// Prepared datasets (gcl:DIR, `gcnlab prepare --shards`): every strategy
// reads only its own blocks from the directory and trains the same model as
// `serial` on the in-memory dataset; Σ nnz_local = nnz(Â); no rank reads the
// whole directory; a mismatched layout is one clear error.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "common/comm/process_grid.hpp"
#include "common/data/edge_values.hpp"
#include "common/data/shards.hpp"
#include "partitioners/prepare.hpp"
#include "partitioners/ptscotch.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

namespace {

namespace fs = std::filesystem;

// n = 1001, f = 19: no rank count 2..8 divides them; directed, so Â ≠ Âᵀ.
const char* kDirected = "sbm:nodes=1001,classes=5,avg-degree=6,features=19,seed=4,directed=1";

RunSpec spec_for(const std::string& algo) {
  RunSpec s;
  s.algo = algo;
  s.model.layers = 3;
  s.model.hidden = 13;
  s.model.dropout = 0.5f;
  s.model.seed = 7;
  s.train.epochs = 5;
  return s;
}

// A directory for this job, removed at the end (rank 0's pid names it).
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    int pid = getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path_ = fmt::format("{}/gcnlab-{}-{}", fs::temp_directory_path().string(), tag, pid);
  }
  ~TempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() != 0) return;
    std::vector<fs::path> mine;  // path_ and path_-suffix
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
      if (e.path().string().rfind(path_, 0) == 0) mine.push_back(e.path());
    std::error_code ec;
    for (const auto& p : mine) fs::remove_all(p, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Rank 0 prepares `data` with `plan` as K x K shards, written in chunks of 13
// nonzeros (so rows and shards cross chunk boundaries); every rank then loads it.
Dataset prepare(const Dataset& data, const VertexPlan& plan, int K, const std::string& dir) {
  if (world_rank() == 0) {
    const PreparedGraph g = prepare_graph(data, plan);
    write_shards(data, dataset_info(data), dataset_fingerprint(data), *g.graph, K, g.partitioned ? partition_report(g.quality, 0) : nlohmann::json(), dir, 13);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return load_dataset("gcl:" + dir);
}

std::int64_t directory_bytes(const std::string& dir) {
  std::int64_t bytes = 0;
  for (const auto& e : fs::directory_iterator(dir)) bytes += static_cast<std::int64_t>(e.file_size());
  return bytes;
}

}  // namespace

TEST_CASE("every strategy trains the same model from a prepared directory", "[prepared]") {
  const int p = world_size();
  const Dataset data = load_dataset(kDirected);
  const NormalizedAdjacency adj = normalized_graph(data);
  TempDir tmp("prepared");
  // K = 8: every rank merges several shards, and pieces of them where 8 is no multiple of a grid
  // dimension (3, 6 ranks); fine enough that no rank needs to read the whole directory.
  struct Case {
    std::string algo;
    VertexPlan plan;
  };
  std::vector<Case> cases;
  for (const StrategyInfo& s : strategies()) {  // every registered full-graph strategy
    if (!s.caps.full_graph) continue;            // scalegnn-4d reads the same blocks as plexus-3d
    if (!s.caps.permutations) cases.push_back({s.name, {"random", 0, Permutation::none, 7}});
    else
      for (const char* permutation : {"none", "single", "double", "double-balanced"})
        cases.push_back({s.name, {"block", 0, parse_permutation(permutation), 7}});
  }
  // a partition: the block rows of the 1D family at this rank count
  cases.push_back({"sa-1d", {"metis", p, Permutation::none, 7}});
  cases.push_back({"1d", {"volume", p, Permutation::none, 7}});

  const RunResult serial = run(MPI_COMM_SELF, spec_for("serial"), data);
  int k = 0;
  for (const Case& c : cases) {
    if (job_grids(c.algo, p).empty()) continue;  // serial at p > 1
    const std::string dir = fmt::format("{}-{}", tmp.path(), k++);
    const Dataset prepared = prepare(data, c.plan, 8, dir);
    const std::int64_t dir_bytes = directory_bytes(dir);
    REQUIRE(prepared.shards != nullptr);
    CHECK(prepared.nodes() == data.nodes());
    CHECK(prepared.nnz() == data.nnz());
    CHECK(prepared.count(ew::kTrain) == data.count(ew::kTrain));
    for (const auto& grid : job_grids(c.algo, p)) {
      INFO(c.algo << " grid " << format_grid(grid) << " partitioner " << c.plan.partitioner << " permutation "
                  << to_string(c.plan.permutation));
      RunSpec spec = spec_for(c.algo);
      spec.grid = grid;
      spec.options["permutation"] = to_string(c.plan.permutation);
      const std::int64_t read_before = prepared.shards->bytes_read();
      const RunResult r = run(MPI_COMM_WORLD, spec, prepared);
      // The block-row family reads 1/R of Â and Âᵀ, 2d/split-3d their owned pieces: no rank
      // reads the whole directory (at 1-2 ranks, R = 1 or a 1 x P grid, whose column slices
      // need every row of Â and Âᵀ, a rank needs most of it). Plexus's 3D layout replicates
      // blocks along a grid axis by design: not held to this bound.
      const bool own_blocks = c.algo == "1d" || c.algo == "sa-1d" ||
                              ((c.algo == "2d" || c.algo == "split-3d") && grid[0] > 1) ||
                              ((c.algo == "1.5d" || c.algo == "sa-1.5d") && grid[0] > 2);
      if (p > 2 && own_blocks) CHECK(prepared.shards->bytes_read() - read_before < dir_bytes);
      require_same_model(serial, r);
      // The backend's measured peak is the analytic need (strategy blocks and buffers + the
      // trainer's activations and weights): nothing else is allocated, no transient copies.
      for (const RankReport& rr : r.ranks) CHECK(rr.peak_bytes == Approx(rr.memory.total()).epsilon(0.01));
      // Σ over ranks of nnz_local = nnz(Â) (replicated strategies count each copy)
      std::int64_t sum = 0;
      for (const RankReport& rr : r.ranks) sum += rr.nnz_local;
      const std::int64_t a_nnz = adj.a_hat->nnz();
      CHECK(sum % a_nnz == 0);
      if (strategy_info(c.algo).grid_axes == 1) CHECK(sum == a_nnz);  // 1D: every nonzero once
    }
  }
}

TEST_CASE("a prepared directory's layout must fit the run: one clear error", "[prepared][errors]") {
  const int p = world_size();
  const Dataset data = load_dataset(kDirected);
  TempDir tmp("mismatch");
  const Dataset metis = prepare(data, {"metis", p + 1, Permutation::none, 7}, 2, tmp.path() + "-metis");
  CHECK_THROWS_WITH(run(MPI_COMM_WORLD, spec_for("1d"), metis),
                    Catch::Contains(fmt::format("partitioned into {} parts", p + 1)) &&
                        Catch::Contains(fmt::format("--parts {}", p)));
  RunSpec plexus = spec_for("plexus-3d");
  plexus.options["permutation"] = "double";
  CHECK_THROWS_WITH(run(MPI_COMM_WORLD, plexus, metis), Catch::Contains("prepared with --permutation none"));
  const Dataset dual = prepare(data, {"block", 0, Permutation::dual, 7}, 2, tmp.path() + "-double");
  CHECK_THROWS_WITH(run(MPI_COMM_WORLD, spec_for("1d"), dual), Catch::Contains("no adjacency with rows in ordering 0"));
  RunSpec other_seed = plexus;
  other_seed.model.seed = 8;
  CHECK_THROWS_WITH(run(MPI_COMM_WORLD, other_seed, dual), Catch::Contains("--seed 7"));
}

TEST_CASE("a truncated or incomplete prepared directory is one clear error", "[prepared][errors]") {
  const Dataset data = load_dataset(kDirected);
  TempDir tmp("truncated");
  const std::string dir = tmp.path();
  prepare(data, {"block", 0, Permutation::none, 7}, 2, dir);
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has loaded it
  if (world_rank() == 0) fs::resize_file(dir + "/labels.bin", 100);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_THROWS_WITH(load_dataset("gcl:" + dir), Catch::Contains("labels.bin") && Catch::Contains("truncated"));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) fs::remove(dir + "/labels.bin");
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_THROWS_WITH(load_dataset("gcl:" + dir), Catch::Contains("labels.bin") && Catch::Contains("missing"));
  prepare(data, {"block", 0, Permutation::none, 7}, 2, dir + "-b");
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) fs::resize_file(dir + "-b/adj-0-0-1-1.bin", 40);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_THROWS_WITH(load_dataset("gcl:" + dir + "-b"), Catch::Contains("adj-0-0-1-1.bin") && Catch::Contains("truncated"));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) fs::remove_all(dir + "-b");
}

TEST_CASE("ptscotch partitions across the ranks, from memory and from a prepared directory", "[prepared][ptscotch]") {
  // PT-Scotch on every rank count: a valid k-way partition by original vertex
  // id, balanced, its distributed edge cut the one evaluate_partition counts,
  // within 1.5x of METIS's (one process, the whole graph). From a prepared
  // directory (randomly ordered, so positions are not vertex ids) each rank
  // reads only its rows of the shards (from 4 ranks on, less than the directory).
  const Dataset data = load_dataset(kDirected);
  const int p = world_size(), parts = 6;
  const MPI_Comm comm = MPI_COMM_WORLD;
  const auto metis = evaluate_partition(data.adj, make_partition("metis", data.adj, parts, 1));
  auto check = [&](const Graph& g, const std::string& what) {
    INFO(what << " on " << p << " ranks");
    const PartitionBlock b = ptscotch_partition(g, parts, 0.03, 1, comm);
    CHECK(b.rows.count == block_range(data.nodes(), p, world_rank()).count);
    const Partition part = gather_partition(g, b, parts, comm);
    if (world_rank() != 0) return;
    REQUIRE(static_cast<std::int64_t>(part.part.size()) == data.nodes());
    const PartitionQuality q = evaluate_partition(data.adj, part);  // checks every part non-empty
    CHECK(q.edge_cut == b.edge_cut);
    CHECK(*std::max_element(q.size.begin(), q.size.end()) <= 1.03 * data.nodes() / parts + 1);
    CHECK(q.edge_cut <= 1.5 * metis.edge_cut);
    CHECK(q.edge_cut < 0.8 * evaluate_partition(data.adj, make_partition("random", data.adj, parts, 1)).edge_cut);
  };
  check(*prepare_graph(data, {}).graph, "in memory");
  const TempDir dir("ptscotch");
  const Dataset prepared = prepare(data, {"random", 0, Permutation::none, 1}, 8, dir.path());
  check(*prepared.shards, "prepared, random order");
  // rows of Âᵀ and (directed) of Â: at most 3 of the 8 shard rows and columns each from 4 ranks on
  if (p >= 4) CHECK(prepared.shards->bytes_read() < directory_bytes(dir.path()));
}

namespace {

// Every entry of `g`'s blocks under `values` against its formula
// (common/data/edge_values.hpp), from A's edges in original ids: forward
// blocks hold edge v -> u at (row u, column v), backward ones at (row v, column u).
void check_values(const Graph& g, const Dataset& data, EdgeValues values) {
  const std::int64_t n = g.n();
  std::vector<std::int64_t> in_degree(static_cast<std::size_t>(n), 0);
  std::set<std::pair<std::int64_t, std::int64_t>> edges;  // (source, target)
  for (std::int64_t v = 0; v < n; ++v)
    for (std::int64_t k = data.adj.rowptr[v]; k < data.adj.rowptr[v + 1]; ++k)
      if (data.adj.col[k] != v) edges.insert({v, data.adj.col[k]}), ++in_degree[data.adj.col[k]];
  const ValuedGraph valued(g, values);
  CHECK(valued.symmetric() == (!data.directed && values != EdgeValues::mean));
  CHECK(valued.in_degrees(0, 0, n) == [&] {
    std::vector<std::int64_t> d;
    for (const std::int64_t v : g.vertices(0, 0, n)) d.push_back(in_degree[v]);
    return d;
  }());
  for (const auto& [r, c] : g.layout().versions)
    for (const Direction d : {Direction::forward, Direction::backward}) {
      // forward reads version (r, c) as rows r x columns c; backward the transpose, rows c x columns r
      const int rows = d == Direction::forward ? r : c, cols = d == Direction::forward ? c : r;
      const std::int64_t r0 = 97, r1 = 613, c0 = 41, c1 = 877;
      const HostCsr b = valued.block(d, rows, r0, r1, cols, c0, c1);
      const HostCsr pattern = g.block(d, rows, r0, r1, cols, c0, c1);
      CHECK(b.rowptr == pattern.rowptr);
      CHECK(b.col == pattern.col);
      const std::vector<std::int64_t> row_ids = g.vertices(rows, r0, r1), col_ids = g.vertices(cols, c0, c1);
      std::int64_t wrong = 0;
      for (std::int64_t i = 0; i < b.rows; ++i)
        for (std::int64_t k = b.rowptr[i]; k < b.rowptr[i + 1]; ++k) {
          const std::int64_t a = row_ids[i], z = col_ids[b.col[k]];
          const std::int64_t source = d == Direction::forward ? z : a, target = d == Direction::forward ? a : z;
          float want = 0.f;
          if (source != target) {
            wrong += edges.count({source, target}) == 0;
            want = values == EdgeValues::sum ? 1.f : static_cast<float>(1.0 / static_cast<double>(in_degree[target]));
          }
          wrong += b.val[k] != want;
        }
      INFO(to_string(values) << " direction " << (d == Direction::forward ? "forward" : "backward") << " version " << r
                             << "," << c);
      CHECK(wrong == 0);
    }
  // column_blocks (ordering 0) forms the same values as block()
  const auto& v = g.layout().versions;
  if (std::find(v.begin(), v.end(), std::array<int, 2>{0, 0}) == v.end()) return;
  const std::vector<Graph::ColumnRange> ranges{{0, 300}, {300, 301}, {500, n}};
  std::size_t k = 0;
  valued.column_blocks(Direction::backward, 200, 700, ranges, [&](HostCsr b) {
    const HostCsr want = valued.block(Direction::backward, 200, 700, ranges[k].first, ranges[k].second);
    CHECK(b.val == want.val);
    ++k;
  });
  CHECK(k == ranges.size());
}

}  // namespace

TEST_CASE("edge values by kind are formed from one prepared graph: in memory, from shards, from shards without degrees",
          "[prepared][values]") {
  TempDir tmp("values");           // every rank (a broadcast names it, a barrier removes it)
  if (world_rank() != 0) return;  // no communication: one rank checks
  const char* kUndirected = "sbm:nodes=1001,classes=5,avg-degree=6,features=19,seed=4";
  const std::vector<std::pair<const char*, const char*>> cases{
      {kDirected, "none"}, {kDirected, "double"}, {kUndirected, "none"}, {kUndirected, "double"}};
  int k = 0;
  for (const auto& [spec, permutation] : cases) {
    const Dataset data = load_dataset(spec);
    const VertexPlan plan{"random", 0, parse_permutation(permutation), 7};
    const PreparedGraph in_memory = prepare_graph(data, plan);
    const std::string dir = fmt::format("{}-{}", tmp.path(), k++);
    write_shards(data, dataset_info(data), dataset_fingerprint(data), *in_memory.graph, 4, nlohmann::json(), dir, 13);
    const ShardStore store(dir);
    CHECK(store.meta().degrees);
    for (const EdgeValues v : {EdgeValues::mean, EdgeValues::sum}) {
      INFO(spec << " permutation " << permutation);
      check_values(*in_memory.graph, data, v);
      check_values(store, data, v);
    }
    // a directory prepared before degrees.bin: the in-degrees are counted from its shards' rows
    {
      std::ifstream in(dir + "/meta.json");
      nlohmann::json meta = nlohmann::json::parse(in);
      meta.erase("degrees");
      std::ofstream(dir + "/meta.json") << meta.dump();
      fs::remove(dir + "/degrees.bin");
    }
    const ShardStore old(dir);
    CHECK_FALSE(old.meta().degrees);
    check_values(old, data, EdgeValues::mean);
  }
}

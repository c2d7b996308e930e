#include "common/data/shards.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/core/blocks.hpp"
#include "common/core/error.hpp"
#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"

namespace gcnlab {

namespace {

namespace fs = std::filesystem;

// Part k of n items in p contiguous parts: [first, end).
std::pair<std::int64_t, std::int64_t> part(std::int64_t n, int p, int k) {
  const BlockRange r = block_range(n, p, k);
  return {r.first, r.end()};
}

std::string adj_name(int r, int c, int i, int j) { return fmt::format("adj-{}-{}-{}-{}.bin", r, c, i, j); }

template <class T>
void put(std::ofstream& out, const T* data, std::size_t n) {
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * sizeof(T)));
}

template <class T>
void write_file(const std::string& path, const std::vector<T>& v) {
  std::ofstream out(path, std::ios::binary);
  GCNLAB_CHECK(out.good(), "cannot write '{}'", path);
  put(out, v.data(), v.size());
  GCNLAB_CHECK(out.good(), "error writing '{}'", path);
}

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)), in_(path_, std::ios::binary) {
    GCNLAB_CHECK(in_.good(), "cannot open shard file '{}'", path_);
  }
  template <class T>
  std::vector<T> array(std::int64_t n, const char* what) {
    GCNLAB_CHECK(n >= 0, "'{}': negative size of {}", path_, what);
    std::vector<T> v(static_cast<std::size_t>(n));
    in_.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)));
    GCNLAB_CHECK(in_.gcount() == static_cast<std::streamsize>(n * sizeof(T)), "'{}' is truncated (in {})", path_, what);
    return v;
  }
  template <class T>
  T scalar(const char* what) {
    return array<T>(1, what)[0];
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ifstream in_;
};

// One stored shard: CSR with local 32-bit columns.
struct Shard {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> rowptr;
  std::vector<std::int32_t> col;
  std::vector<float> val;
};

Shard read_shard(const std::string& path, std::int64_t rows, std::int64_t cols) {
  Reader in(path);
  Shard s;
  s.rows = in.scalar<std::int64_t>("rows");
  s.cols = in.scalar<std::int64_t>("cols");
  const auto nnz = in.scalar<std::int64_t>("nnz");
  GCNLAB_CHECK(s.rows == rows && s.cols == cols, "'{}' is a {} x {} shard, expected {} x {}", path, s.rows, s.cols,
               rows, cols);
  s.rowptr = in.array<std::int64_t>(rows + 1, "row pointers");
  GCNLAB_CHECK(s.rowptr.front() == 0 && s.rowptr.back() == nnz, "'{}': row pointers do not span {} entries", path, nnz);
  s.col = in.array<std::int32_t>(nnz, "column ids");
  s.val = in.array<float>(nnz, "values");
  for (std::int32_t c : s.col) GCNLAB_CHECK(c >= 0 && c < cols, "'{}': column {} out of range [0, {})", path, c, cols);
  return s;
}

}  // namespace

bool is_shard_directory(const std::string& path) { return fs::is_directory(path) && fs::exists(fs::path(path) / "meta.json"); }

ShardStore::ShardStore(std::string dir) : dir_(std::move(dir)) {
  const std::string path = (fs::path(dir_) / "meta.json").string();
  std::ifstream in(path);
  GCNLAB_CHECK(in.good(), "cannot open '{}'", path);
  try {
    const auto j = nlohmann::json::parse(in);
    GCNLAB_CHECK(j.value("schema", "") == "gcnlab.shards/1", "'{}' is not a gcnlab shard directory", dir_);
    meta_.name = j.at("name");
    meta_.spec = j.value("spec", "");
    meta_.permutation = j.at("permutation");
    meta_.nodes = j.at("nodes");
    meta_.nnz = j.at("nnz");
    meta_.features = j.at("features");
    meta_.classes = j.at("classes");
    meta_.shards = j.at("shards");
    meta_.directed = j.at("directed");
    meta_.synthetic_features = j.at("synthetic_features");
    meta_.seed = j.at("seed");
    meta_.feature_seed = j.value("feature_seed", std::uint64_t{0});
    meta_.class_signal = j.value("class_signal", 0.f);
    meta_.versions = j.at("versions").get<std::vector<std::array<int, 2>>>();
  } catch (const nlohmann::json::exception& e) {
    fail("'{}' is not a valid shard description ({})", path, e.what());
  }
  GCNLAB_CHECK(meta_.nodes >= 1 && meta_.shards >= 1 && meta_.shards <= meta_.nodes,
               "'{}': {} shards of {} vertices", path, meta_.shards, meta_.nodes);
}

std::vector<std::int64_t> ShardStore::ordering(int id) const {
  Reader in((fs::path(dir_) / fmt::format("order{}.bin", id)).string());
  auto order = in.array<std::int64_t>(meta_.nodes, "ordering");
  std::vector<char> seen(static_cast<std::size_t>(meta_.nodes), 0);
  for (std::int64_t v : order) {
    GCNLAB_CHECK(v >= 0 && v < meta_.nodes && !seen[v], "'{}' is not a permutation of 0..{}", in.path(), meta_.nodes - 1);
    seen[v] = 1;
  }
  return order;
}

HostCsr ShardStore::adjacency(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const {
  GCNLAB_CHECK(std::find(meta_.versions.begin(), meta_.versions.end(), std::array<int, 2>{r, c}) != meta_.versions.end(),
               "'{}' holds no adjacency with rows in ordering {} and columns in ordering {} (prepared with "
               "--permutation {})",
               dir_, r, c, meta_.permutation);
  const int K = meta_.shards;
  const std::int64_t n = meta_.nodes;
  HostCsr out;
  out.rows = r1 - r0;
  out.cols = c1 - c0;
  out.rowptr.reserve(static_cast<std::size_t>(out.rows) + 1);
  for (int i = 0; i < K; ++i) {
    const auto [ri0, ri1] = part(n, K, i);
    if (ri1 <= r0 || ri0 >= r1) continue;
    // the column shards of this row block that overlap [c0, c1), left to right
    std::vector<std::pair<std::int64_t, Shard>> row_of_shards;
    for (int j = 0; j < K; ++j) {
      const auto [cj0, cj1] = part(n, K, j);
      if (cj1 <= c0 || cj0 >= c1) continue;
      row_of_shards.emplace_back(cj0, read_shard((fs::path(dir_) / adj_name(r, c, i, j)).string(), ri1 - ri0, cj1 - cj0));
    }
    for (std::int64_t q = std::max(r0, ri0); q < std::min(r1, ri1); ++q) {
      for (const auto& [cj0, s] : row_of_shards)
        for (std::int64_t e = s.rowptr[q - ri0]; e < s.rowptr[q - ri0 + 1]; ++e) {
          const std::int64_t col = cj0 + s.col[e];
          if (col < c0 || col >= c1) continue;
          out.col.push_back(col - c0);
          out.val.push_back(s.val[e]);
        }
      out.rowptr.push_back(static_cast<std::int64_t>(out.col.size()));
    }
  }
  GCNLAB_ASSERT(static_cast<std::int64_t>(out.rowptr.size()) == out.rows + 1);
  return out;
}

void ShardStore::features(const std::vector<std::int64_t>& vertices, std::int64_t c0, std::int64_t c1,
                          float* out) const {
  GCNLAB_ASSERT(!meta_.synthetic_features);
  const std::int64_t n = meta_.nodes, f = meta_.features, w = c1 - c0;
  const auto order = ordering(0);
  std::vector<std::int64_t> position(static_cast<std::size_t>(n));
  for (std::int64_t q = 0; q < n; ++q) position[order[q]] = q;
  // read each needed row block once
  const int K = meta_.shards;
  std::vector<std::vector<std::size_t>> wanted(K);
  for (std::size_t k = 0; k < vertices.size(); ++k) {
    const std::int64_t q = position[vertices[k]];
    int i = static_cast<int>(std::min<std::int64_t>(K - 1, q / std::max<std::int64_t>(1, n / K)));
    while (part(n, K, i).first > q) --i;
    while (part(n, K, i).second <= q) ++i;
    wanted[i].push_back(k);
  }
  for (int i = 0; i < K; ++i) {
    if (wanted[i].empty()) continue;
    const auto [q0, q1] = part(n, K, i);
    Reader in((fs::path(dir_) / fmt::format("x-{}.bin", i)).string());
    const auto x = in.array<float>((q1 - q0) * f, "features");
    for (std::size_t k : wanted[i]) {
      const std::int64_t row = position[vertices[k]] - q0;
      std::copy(x.begin() + row * f + c0, x.begin() + row * f + c1, out + k * w);
    }
  }
}

void write_shards(const Dataset& d, const Graph& g, const std::vector<std::vector<std::int64_t>>& orderings,
                  const std::vector<std::array<int, 2>>& versions, int K, const std::string& permutation,
                  std::uint64_t seed, const std::string& dir) {
  const std::int64_t n = g.n;
  GCNLAB_CHECK(K >= 1 && K <= n, "--shards {}x{}: cannot cut {} vertices into {} blocks", K, K, n, K);
  for (std::int64_t p = 0; p < n; ++p) GCNLAB_ASSERT(g.order[p] == p);
  std::error_code ec;
  fs::create_directories(dir, ec);
  GCNLAB_CHECK(!ec && fs::is_directory(dir), "cannot create directory '{}' ({})", dir, ec.message());

  for (std::size_t id = 0; id < orderings.size(); ++id)
    write_file((fs::path(dir) / fmt::format("order{}.bin", id)).string(), orderings[id]);
  write_file((fs::path(dir) / "labels.bin").string(), d.labels);
  write_file((fs::path(dir) / "split.bin").string(), d.split);

  for (const auto& [r, c] : versions) {
    std::vector<std::int64_t> col_block(static_cast<std::size_t>(n)), col_local(static_cast<std::size_t>(n));
    for (int j = 0; j < K; ++j) {
      const auto [c0, c1] = part(n, K, j);
      for (std::int64_t q = c0; q < c1; ++q) col_block[orderings[c][q]] = j, col_local[orderings[c][q]] = q - c0;
    }
    for (int i = 0; i < K; ++i) {
      const auto [r0, r1] = part(n, K, i);
      // this row block's entries, split by column block
      std::vector<std::vector<std::vector<std::pair<std::int32_t, float>>>> rows(
          K, std::vector<std::vector<std::pair<std::int32_t, float>>>(static_cast<std::size_t>(r1 - r0)));
      for (std::int64_t q = r0; q < r1; ++q) {
        const std::int64_t v = orderings[r][q];
        for (std::int64_t e = g.a_hat_t->rowptr[v]; e < g.a_hat_t->rowptr[v + 1]; ++e) {
          const std::int64_t u = g.a_hat_t->col[e];
          rows[col_block[u]][q - r0].emplace_back(static_cast<std::int32_t>(col_local[u]), g.a_hat_t->val[e]);
        }
      }
      for (int j = 0; j < K; ++j) {
        const auto [c0, c1] = part(n, K, j);
        std::vector<std::int64_t> rowptr{0};
        std::vector<std::int32_t> col;
        std::vector<float> val;
        for (auto& row : rows[j]) {
          std::sort(row.begin(), row.end());
          for (const auto& [cl, v] : row) col.push_back(cl), val.push_back(v);
          rowptr.push_back(static_cast<std::int64_t>(col.size()));
        }
        const std::string path = (fs::path(dir) / adj_name(r, c, i, j)).string();
        std::ofstream out(path, std::ios::binary);
        GCNLAB_CHECK(out.good(), "cannot write '{}'", path);
        const std::int64_t head[3] = {r1 - r0, c1 - c0, static_cast<std::int64_t>(col.size())};
        put(out, head, 3);
        put(out, rowptr.data(), rowptr.size());
        put(out, col.data(), col.size());
        put(out, val.data(), val.size());
        GCNLAB_CHECK(out.good(), "error writing '{}'", path);
      }
    }
  }

  if (!d.synthetic_features)
    for (int i = 0; i < K; ++i) {
      const auto [q0, q1] = part(n, K, i);
      std::vector<float> x(static_cast<std::size_t>((q1 - q0) * d.features));
      for (std::int64_t q = q0; q < q1; ++q)
        std::copy(d.x.begin() + orderings[0][q] * d.features, d.x.begin() + (orderings[0][q] + 1) * d.features,
                  x.begin() + (q - q0) * d.features);
      write_file((fs::path(dir) / fmt::format("x-{}.bin", i)).string(), x);
    }

  const nlohmann::json meta = {{"schema", "gcnlab.shards/1"},
                               {"name", d.name},
                               {"spec", d.spec},
                               {"nodes", n},
                               {"nnz", d.nnz()},
                               {"features", d.features},
                               {"classes", d.classes},
                               {"directed", d.directed},
                               {"shards", K},
                               {"permutation", permutation},
                               {"seed", seed},
                               {"synthetic_features", d.synthetic_features},
                               {"feature_seed", d.feature_seed},
                               {"class_signal", d.class_signal},
                               {"versions", versions}};
  std::ofstream out(fs::path(dir) / "meta.json");  // last: a directory without it is incomplete
  out << meta.dump(1) << "\n";
  GCNLAB_CHECK(out.good(), "error writing '{}/meta.json'", dir);
}

Dataset read_shard_dataset(const std::string& dir) {
  auto store = std::make_shared<const ShardStore>(dir);
  const ShardMeta& m = store->meta();
  Dataset d;
  d.name = m.name;
  d.directed = m.directed;
  d.adj.rows = d.adj.cols = m.nodes;
  d.adj.rowptr.assign(static_cast<std::size_t>(m.nodes) + 1, 0);
  d.features = m.features;
  d.synthetic_features = m.synthetic_features;
  d.feature_seed = m.feature_seed;
  d.class_signal = m.class_signal;
  d.classes = m.classes;
  Reader labels((fs::path(dir) / "labels.bin").string());
  d.labels = labels.array<std::int32_t>(m.nodes, "labels");
  Reader split((fs::path(dir) / "split.bin").string());
  d.split = split.array<std::uint8_t>(m.nodes, "split");
  d.shards = std::move(store);
  return d;
}

Graph shard_graph(const Dataset& d) {
  GCNLAB_ASSERT(d.shards != nullptr);
  Graph g;
  g.n = d.nodes();
  g.directed = d.directed;
  g.order.resize(static_cast<std::size_t>(g.n));
  for (std::int64_t v = 0; v < g.n; ++v) g.order[v] = v;
  g.shards = d.shards;
  return g;
}

}  // namespace gcnlab

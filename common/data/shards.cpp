#include "common/data/shards.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/core/progress.hpp"
#include "common/core/atomic_file.hpp"
#include "common/core/blocks.hpp"
#include "common/core/error.hpp"
#include "common/core/json.hpp"
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
  AtomicFile file(path, std::ios::binary);
  put(file.stream(), v.data(), v.size());
  file.commit();
}

// A file read whole or by ranges, counting what it reads; truncation and
// missing files are errors that name the file.
class File {
 public:
  File(std::string path, std::atomic<std::int64_t>& counter) : path_(std::move(path)), counter_(counter) {
    fd_ = ::open(path_.c_str(), O_RDONLY);
    GCNLAB_CHECK(fd_ >= 0, "cannot open '{}' ({}); the prepared directory is incomplete", path_, std::strerror(errno));
    struct stat st {};
    ::fstat(fd_, &st);
    size_ = st.st_size;
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  std::int64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // n items of T at byte offset `at`.
  template <class T>
  void read(std::int64_t at, std::int64_t n, T* out, const char* what) const {
    const auto bytes = static_cast<std::int64_t>(n * sizeof(T));
    GCNLAB_CHECK(n >= 0 && at + bytes <= size_, "'{}' is truncated (in {}: needs {} bytes, has {})", path_, what,
                 at + bytes, size_);
    auto* p = reinterpret_cast<char*>(out);
    for (std::int64_t done = 0; done < bytes;) {
      const ssize_t got = ::pread(fd_, p + done, static_cast<std::size_t>(bytes - done), at + done);
      GCNLAB_CHECK(got > 0, "error reading '{}' ({})", path_, got < 0 ? std::strerror(errno) : "end of file");
      done += got;
    }
    counter_ += bytes;
  }
  template <class T>
  std::vector<T> array(std::int64_t at, std::int64_t n, const char* what) const {
    GCNLAB_CHECK(n >= 0, "'{}': negative size of {}", path_, what);
    std::vector<T> v(static_cast<std::size_t>(n));
    read(at, n, v.data(), what);
    return v;
  }

 private:
  std::string path_;
  std::atomic<std::int64_t>& counter_;
  int fd_ = -1;
  std::int64_t size_ = 0;
};

// One stored shard: CSR with local 32-bit columns.
struct Shard {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> rowptr;
  std::vector<std::int32_t> col;
  std::vector<float> val;
};

Shard read_shard(const File& in, std::int64_t rows, std::int64_t cols) {
  const auto h = in.array<std::int64_t>(0, 3, "header");
  Shard s;
  s.rows = h[0], s.cols = h[1];
  const std::int64_t nnz = h[2];
  GCNLAB_CHECK(s.rows == rows && s.cols == cols, "'{}' is a {} x {} shard, expected {} x {}", in.path(), s.rows, s.cols,
               rows, cols);
  GCNLAB_CHECK(nnz >= 0 && nnz <= in.size() / 8 && in.size() == 24 + 8 * (rows + 1) + 8 * nnz,
               "'{}' is truncated or corrupt ({} bytes for {} rows and {} nonzeros)", in.path(), in.size(), rows, nnz);
  s.rowptr = in.array<std::int64_t>(24, rows + 1, "row pointers");
  GCNLAB_CHECK(s.rowptr.front() == 0 && s.rowptr.back() == nnz, "'{}': row pointers do not span {} entries", in.path(), nnz);
  for (std::int64_t r = 0; r < rows; ++r)
    GCNLAB_CHECK(s.rowptr[r] <= s.rowptr[r + 1], "'{}': row pointers decrease at row {}", in.path(), r);
  s.col = in.array<std::int32_t>(24 + 8 * (rows + 1), nnz, "column ids");
  s.val = in.array<float>(24 + 8 * (rows + 1) + 4 * nnz, nnz, "values");
  for (std::int32_t c : s.col) GCNLAB_CHECK(c >= 0 && c < cols, "'{}': column {} out of range [0, {})", in.path(), c, cols);
  return s;
}

}  // namespace

bool is_shard_directory(const std::string& path) { return fs::is_directory(path) && fs::exists(fs::path(path) / "meta.json"); }

namespace {
constexpr const char* kSchema = "gcnlab.shards/2";
}  // namespace

ShardMeta read_shard_meta(const std::string& dir) {
  const std::string path = (fs::path(dir) / "meta.json").string();
  std::ifstream in(path);
  GCNLAB_CHECK(in.good(), "cannot open '{}'", path);
  ShardMeta m;
  try {
    const auto j = nlohmann::json::parse(in);
    const std::string schema = j.value("schema", "");
    GCNLAB_CHECK(schema != "gcnlab.shards/1", "'{}' was prepared by an older gcnlab (schema {}); run gcnlab prepare again",
                 dir, schema);
    GCNLAB_CHECK(schema == kSchema, "'{}' is not a gcnlab shard directory", dir);
    m.name = json_get<std::string>(j.at("name"));
    m.spec = j.value("spec", "");
    m.fingerprint = j.value("fingerprint", "");
    get_to(j.at("nodes"), m.nodes);
    get_to(j.at("nnz"), m.nnz);
    get_to(j.at("features"), m.features);
    get_to(j.at("classes"), m.classes);
    get_to(j.at("shards"), m.shards);
    get_to(j.at("directed"), m.directed);
    get_to(j.at("synthetic_features"), m.synthetic_features);
    m.degrees = j.value("degrees", false);
    get_to(j.at("feature_seed"), m.feature_seed);
    get_to(j.at("class_signal"), m.class_signal);
    get_to(j.at("split_counts"), m.split_counts);
    const auto& l = j.at("layout");
    get_to(l.at("partitioner"), m.layout.partitioner);
    get_to(l.at("parts"), m.layout.parts);
    get_to(l.at("blocks"), m.layout.blocks);
    get_to(l.at("permutation"), m.layout.permutation);
    get_to(l.at("seed"), m.layout.seed);
    get_to(l.at("orderings"), m.layout.orderings);
    get_to(l.at("versions"), m.layout.versions);
    const auto& info = j.at("info");
    // Bounds under which every size derived below (8 n, 4 n f, nnz + n) fits an int64.
    constexpr std::int64_t kMaxNodes = std::int64_t{1} << 40, kMax = std::numeric_limits<std::int64_t>::max();
    GCNLAB_CHECK(m.nodes >= 1 && m.nodes <= kMaxNodes && m.nnz >= 0 && m.nnz <= kMax - m.nodes && m.features >= 1 &&
                     m.features <= kMax / (4 * m.nodes),
                 "'{}': {} vertices, {} edges, {} features", path, m.nodes, m.nnz, m.features);
    m.info = {m.nodes,
              m.nnz,
              m.nnz + m.nodes,
              json_get<std::int64_t>(info.at("edges_undirected")),
              json_get<std::int64_t>(info.at("degree_min")),
              json_get<std::int64_t>(info.at("degree_max")),
              json_get<double>(info.at("degree_mean")),
              json_get<std::int64_t>(info.at("isolated"))};
    m.partition = j.value("partition", nlohmann::json());
  } catch (const nlohmann::json::exception& e) {
    fail("'{}' is not a valid shard description ({})", path, e.what());
  }
  const GraphLayout& l = m.layout;
  GCNLAB_CHECK(m.nodes >= 1 && m.shards >= 1 && m.shards <= m.nodes && m.features >= 1 && m.classes >= 1,
               "'{}': {} shards of {} vertices, {} features, {} classes", path, m.shards, m.nodes, m.features, m.classes);
  GCNLAB_CHECK(l.orderings >= 1 && !l.versions.empty() &&
                   (l.parts == 0 ? l.blocks.empty()
                                 : static_cast<int>(l.blocks.size()) == l.parts + 1 && l.blocks.front() == 0 &&
                                       l.blocks.back() == m.nodes && std::is_sorted(l.blocks.begin(), l.blocks.end())),
               "'{}': inconsistent vertex layout (orderings, versions or partition blocks)", path);
  for (const auto& [r, c] : l.versions)
    GCNLAB_CHECK(r >= 0 && r < l.orderings && c >= 0 && c < l.orderings, "'{}': version ({}, {}) names no ordering",
                 path, r, c);
  return m;
}

ShardStore::ShardStore(const std::string& dir) : ShardStore(dir, read_shard_meta(dir)) {}

ShardStore::ShardStore(const std::string& dir, ShardMeta meta)
    : Graph(meta.nodes, meta.directed, meta.layout), dir_(dir), meta_(std::move(meta)) {
  // Every file the directory should hold is there and has its size: a truncated
  // directory is one error at load time, on every rank, not a failure mid-setup.
  const std::int64_t n = meta_.nodes;
  auto expect = [&](const std::string& file, std::int64_t bytes) {
    std::error_code ec;
    const auto size = fs::file_size(path(file), ec);
    GCNLAB_CHECK(!ec, "'{}' is missing from the prepared directory '{}'", file, dir_);
    GCNLAB_CHECK(static_cast<std::int64_t>(size) == bytes, "'{}' has {} bytes, expected {} (truncated?)", path(file),
                 size, bytes);
  };
  for (int id = 0; id < meta_.layout.orderings; ++id) expect(fmt::format("order{}.bin", id), 8 * n);
  expect("labels.bin", 4 * n);
  expect("split.bin", n);
  if (!meta_.synthetic_features) expect("x.bin", 4 * n * meta_.features);
  if (meta_.degrees) expect("degrees.bin", 8 * n);
  for (const auto& [r, c] : meta_.layout.versions)
    for (int i = 0; i < meta_.shards; ++i)
      for (int j = 0; j < meta_.shards; ++j) {
        const File shard(path(adj_name(r, c, i, j)), bytes_read_);  // header only
        GCNLAB_CHECK(shard.size() >= 24, "'{}' is truncated (no header)", shard.path());
        const auto h = shard.array<std::int64_t>(0, 3, "header");
        const BlockRange rows = block_range(n, meta_.shards, i), cols = block_range(n, meta_.shards, j);
        GCNLAB_CHECK(h[0] == rows.count && h[1] == cols.count && h[2] >= 0 && h[2] <= shard.size() / 8 &&
                         shard.size() == 24 + 8 * (h[0] + 1) + 8 * h[2],
                     "'{}' is truncated or corrupt ({} bytes; a {} x {} shard was expected)", shard.path(),
                     shard.size(), rows.count, cols.count);
      }
}

std::string ShardStore::path(const std::string& file) const { return (fs::path(dir_) / file).string(); }

std::vector<std::int64_t> ShardStore::read_vertices(int id, std::int64_t q0, std::int64_t q1) const {
  const File in(path(fmt::format("order{}.bin", id)), bytes_read_);
  auto v = in.array<std::int64_t>(8 * q0, q1 - q0, "ordering");
  for (std::int64_t x : v) GCNLAB_CHECK(x >= 0 && x < meta_.nodes, "'{}': vertex {} out of range [0, {})", in.path(), x, meta_.nodes);
  return v;
}

// Keeps the shards one assemble_t call used, for the next: neighbouring column
// blocks share the shards that straddle their boundary, which are read once.
class ShardStore::ShardCache {
 public:
  using Read = std::function<std::shared_ptr<const Shard>()>;
  std::shared_ptr<const Shard> get(const std::pair<int, int>& key, const Read& read) {
    auto& slot = current_[key];
    if (!slot) {
      const auto it = previous_.find(key);
      slot = it != previous_.end() ? it->second : read();
    }
    return slot;
  }
  void next() { previous_ = std::exchange(current_, {}); }

 private:
  std::map<std::pair<int, int>, std::shared_ptr<const Shard>> previous_, current_;
};

HostCsr ShardStore::read_block_t(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1) const {
  return assemble_t(r, r0, r1, c, c0, c1, nullptr);
}

void ShardStore::read_column_blocks(Direction d, std::int64_t r0, std::int64_t r1,
                                    std::span<const ColumnRange> columns, const BlockSink& sink) const {
  ShardCache cache;
  for (const auto& [c0, c1] : columns) {
    if (d == Direction::forward || !directed())
      sink(assemble_t(0, r0, r1, 0, c0, c1, &cache));
    else  // Â's block is the transpose of Âᵀ's (columns, rows) block
      sink(transpose(assemble_t(0, c0, c1, 0, r0, r1, &cache)));
    cache.next();
  }
}

HostCsr ShardStore::assemble_t(int r, std::int64_t r0, std::int64_t r1, int c, std::int64_t c0, std::int64_t c1,
                               ShardCache* cache) const {
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
    std::vector<std::pair<std::int64_t, std::shared_ptr<const Shard>>> row_of_shards;
    for (int j = 0; j < K; ++j) {
      const auto [cj0, cj1] = part(n, K, j);
      if (cj1 <= c0 || cj0 >= c1) continue;
      auto read = [&, rows = ri1 - ri0, cols = cj1 - cj0] {  // (clang 14 captures no structured bindings)
        return std::make_shared<const Shard>(read_shard(File(path(adj_name(r, c, i, j)), bytes_read_), rows, cols));
      };
      row_of_shards.emplace_back(cj0, cache ? cache->get({i, j}, read) : read());
    }
    for (std::int64_t q = std::max(r0, ri0); q < std::min(r1, ri1); ++q) {
      for (const auto& [cj0, shard] : row_of_shards)
        for (std::int64_t e = shard->rowptr[q - ri0]; e < shard->rowptr[q - ri0 + 1]; ++e) {
          const std::int64_t col = cj0 + shard->col[e];
          if (col < c0 || col >= c1) continue;
          out.col.push_back(col - c0);
          out.val.push_back(shard->val[e]);
        }
      out.rowptr.push_back(static_cast<std::int64_t>(out.col.size()));
    }
  }
  GCNLAB_ASSERT(static_cast<std::int64_t>(out.rowptr.size()) == out.rows + 1);
  return out;
}

template <class T>
std::vector<T> ShardStore::rows_of(const std::string& file, std::span<const std::int64_t> vertices,
                                   std::int64_t width, std::int64_t c0, std::int64_t c1) const {
  // Visit the vertices in file order and read each run of consecutive rows at once.
  const File in(path(file), bytes_read_);
  std::vector<std::size_t> idx(vertices.size());
  for (std::size_t k = 0; k < idx.size(); ++k) {
    GCNLAB_CHECK(vertices[k] >= 0 && vertices[k] < meta_.nodes, "vertex {} out of range [0, {})", vertices[k], meta_.nodes);
    idx[k] = k;
  }
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return vertices[a] < vertices[b]; });
  const std::int64_t w = c1 - c0;
  std::vector<T> out(vertices.size() * static_cast<std::size_t>(w)), run;
  for (std::size_t a = 0; a < idx.size();) {
    std::size_t b = a + 1;
    while (b < idx.size() && vertices[idx[b]] <= vertices[idx[b - 1]] + 1) ++b;
    const std::int64_t v0 = vertices[idx[a]], rows = vertices[idx[b - 1]] - v0 + 1;
    run.resize(static_cast<std::size_t>(rows * width));
    in.read(static_cast<std::int64_t>(v0 * width * sizeof(T)), rows * width, run.data(), file.c_str());
    for (std::size_t k = a; k < b; ++k) {
      const T* row = run.data() + (vertices[idx[k]] - v0) * width;
      std::copy(row + c0, row + c1, out.begin() + static_cast<std::ptrdiff_t>(idx[k] * w));
    }
    a = b;
  }
  return out;
}

std::vector<std::int64_t> ShardStore::read_in_degrees(int id, std::int64_t q0, std::int64_t q1) const {
  if (!meta_.degrees) return Graph::read_in_degrees(id, q0, q1);
  const std::vector<std::int64_t> v = read_vertices(id, q0, q1);
  return rows_of<std::int64_t>("degrees.bin", v, 1, 0, 1);
}

void ShardStore::features(std::span<const std::int64_t> vertices, std::int64_t c0, std::int64_t c1, float* out) const {
  GCNLAB_ASSERT(!meta_.synthetic_features);
  const auto x = rows_of<float>("x.bin", vertices, meta_.features, c0, c1);
  std::copy(x.begin(), x.end(), out);
}

std::vector<std::int32_t> ShardStore::labels(std::span<const std::int64_t> vertices) const {
  auto y = rows_of<std::int32_t>("labels.bin", vertices, 1, 0, 1);
  for (std::size_t k = 0; k < y.size(); ++k)
    GCNLAB_CHECK(y[k] >= -1 && y[k] < meta_.classes, "'{}': label {} of vertex {} is out of range [0, {})",
                 path("labels.bin"), y[k], vertices[k], meta_.classes);
  return y;
}

std::vector<std::uint8_t> ShardStore::split(std::span<const std::int64_t> vertices) const {
  auto s = rows_of<std::uint8_t>("split.bin", vertices, 1, 0, 1);
  for (std::size_t k = 0; k < s.size(); ++k)
    GCNLAB_CHECK(s[k] <= ew::kTest, "'{}': split {} of vertex {} is not none/train/val/test", path("split.bin"), s[k],
                 vertices[k]);
  return s;
}

ShardWriter::ShardWriter(const ShardRows& rows, std::int64_t n, int K, std::array<int, 2> version, std::string dir,
                         std::int64_t chunk_entries)
    : rows_(rows), n_(n), K_(K), version_(version), dir_(std::move(dir)), chunk_entries_(chunk_entries),
      col_block_(rows.column_order.size()), col_local_(rows.column_order.size()) {
  GCNLAB_ASSERT(chunk_entries >= 1);
  if (rows.column_order.empty()) return;  // the identity: column_of computes them
  for (int j = 0; j < K_; ++j) {
    const auto [c0, c1] = part(n_, K_, j);
    for (std::int64_t q = c0; q < c1; ++q)
      col_block_[rows.column_order[q]] = j, col_local_[rows.column_order[q]] = static_cast<std::int32_t>(q - c0);
  }
}

std::pair<int, std::int32_t> ShardWriter::column_of(std::int64_t u) const {
  if (!col_block_.empty()) return {col_block_[u], col_local_[u]};
  const int j = block_of(n_, K_, u);
  return {j, static_cast<std::int32_t>(u - block_range(n_, K_, j).first)};
}

std::string ShardWriter::path(int i, int j) const {
  return (fs::path(dir_) / adj_name(version_[0], version_[1], i, j)).string();
}

std::pair<std::int64_t, std::int64_t> ShardWriter::row_of(std::int64_t q) const {
  const std::int64_t v =
      (rows_.row_vertices.empty() ? q : rows_.row_vertices[q - rows_.first_position]) - rows_.first_vertex;
  return {rows_.a_t.rowptr[v], rows_.a_t.rowptr[v + 1]};
}

std::vector<std::int64_t> ShardWriter::entries(int i, std::int64_t first, std::int64_t end) const {
  GCNLAB_ASSERT(block_range(n_, K_, i).first <= first && first <= end && end <= block_range(n_, K_, i).end());
  std::vector<std::int64_t> out(static_cast<std::size_t>(K_), 0);
  for (std::int64_t q = first; q < end; ++q)
    for (auto [e, stop] = row_of(q); e < stop; ++e) ++out[column_of(rows_.a_t.col[e]).first];
  return out;
}

void ShardWriter::create(int i, std::span<const std::int64_t> total) const {
  const std::int64_t rows = block_range(n_, K_, i).count;
  for (int j = 0; j < K_; ++j)
    PartFile::create(path(i, j), columns_at(rows) + total[j] * (4 + 4));
}

void ShardWriter::commit(int i) const {
  for (int j = 0; j < K_; ++j) PartFile::commit(path(i, j));
}

void ShardWriter::write_block(int i, Progress& progress) {
  const BlockRange b = block_range(n_, K_, i);
  const std::vector<std::int64_t> total = entries(i, b.first, b.end());
  create(i, total);
  write_part(i, b.first, b.end(), std::vector<std::int64_t>(static_cast<std::size_t>(K_), 0), total, progress);
  commit(i);
}

void ShardWriter::write_part(int i, std::int64_t first, std::int64_t end, std::span<const std::int64_t> before,
                             std::span<const std::int64_t> total, Progress& progress) {
  const BlockRange b = block_range(n_, K_, i);
  GCNLAB_ASSERT(b.first <= first && first <= end && end <= b.end());
  std::vector<std::unique_ptr<PartFile>> files;
  for (int j = 0; j < K_; ++j) {
    files.push_back(std::make_unique<PartFile>(path(i, j)));
    if (first == b.first) {  // the block's first writer: the header and the first row's offset
      GCNLAB_ASSERT(before[j] == 0);
      const auto [c0, c1] = part(n_, K_, j);
      const std::int64_t head[4] = {b.count, c1 - c0, total[j], 0};
      files[j]->write_at<std::int64_t>(0, head);
    }
  }
  std::vector<std::int64_t> written(before.begin(), before.end());  // shard j's entries before the next chunk
  for (std::int64_t qa = first; qa < end;) qa = write_chunk(i, qa, end, written, total, files);
  for (int j = 0; j < K_; ++j) {
    GCNLAB_ASSERT(written[j] <= total[j] && (end < b.end() || written[j] == total[j]));
    files[j]->close();
    progress.advance();
  }
}

std::int64_t ShardWriter::write_chunk(int i, std::int64_t qa, std::int64_t end, std::vector<std::int64_t>& written,
                                      std::span<const std::int64_t> total,
                                      std::vector<std::unique_ptr<PartFile>>& files) {
  // rows [qa, qb): at most chunk_entries_ entries (one row at least), and so
  // few rows that their K row offsets take no more room than the chunk
  const std::int64_t max_rows = std::max<std::int64_t>(1, chunk_entries_ / K_);
  std::int64_t entries = 0, qb;
  auto length = [&](std::int64_t q) { return row_of(q).second - row_of(q).first; };
  for (qb = qa; qb < end && (qb == qa || (entries + length(qb) <= chunk_entries_ && qb - qa < max_rows)); ++qb)
    entries += length(qb);
  const std::int64_t rows = qb - qa, stride = rows + 1;
  // offsets_[j * stride + k]: shard j's entries before row qa + k, from written[j]
  offsets_.assign(static_cast<std::size_t>(K_ * stride), 0);
  for (std::int64_t q = qa; q < qb; ++q)
    for (auto [e, stop] = row_of(q); e < stop; ++e) ++offsets_[column_of(rows_.a_t.col[e]).first * stride + q - qa + 1];
  // shard j's entries of the chunk start at start[j] in it, rows in order
  std::vector<std::int64_t> start(static_cast<std::size_t>(K_) + 1, 0), next(static_cast<std::size_t>(K_));
  for (int j = 0; j < K_; ++j) {
    std::int64_t* const o = offsets_.data() + j * stride;
    o[0] = written[j];
    for (std::int64_t k = 0; k < rows; ++k) o[k + 1] += o[k];
    start[j + 1] = start[j] + o[rows] - o[0];
  }
  std::copy(start.begin(), start.end() - 1, next.begin());
  chunk_.resize(static_cast<std::size_t>(entries));
  for (std::int64_t q = qa; q < qb; ++q)
    for (auto [e, stop] = row_of(q); e < stop; ++e) {
      const auto [j, local] = column_of(rows_.a_t.col[e]);
      chunk_[next[j]++] = {local, rows_.a_t.val[e]};
    }
  const BlockRange b = block_range(n_, K_, i);
  const std::int64_t columns = columns_at(b.count);
  for (int j = 0; j < K_; ++j) {
    const std::int64_t* const o = offsets_.data() + j * stride;
    Entry* const base = chunk_.data() + start[j] - o[0];
    for (std::int64_t k = 0; k < rows; ++k)
      std::sort(base + o[k], base + o[k + 1], [](const Entry& x, const Entry& y) { return x.col < y.col; });
    const auto count = static_cast<std::size_t>(start[j + 1] - start[j]);
    cols_.resize(count), vals_.resize(count);
    for (std::size_t k = 0; k < count; ++k) cols_[k] = chunk_[start[j] + k].col, vals_[k] = chunk_[start[j] + k].val;
    files[j]->write_at(row_offset_at(qa - b.first + 1), std::span<const std::int64_t>(o + 1, rows));
    files[j]->write_at<std::int32_t>(columns + o[0] * 4, cols_);
    files[j]->write_at<float>(columns + total[j] * 4 + o[0] * 4, vals_);
    written[j] = o[rows];
  }
  return qb;
}

namespace {

nlohmann::json to_json(const ShardMeta& m) {
  const GraphLayout& layout = m.layout;
  const DatasetInfo& info = m.info;
  return {
      {"schema", kSchema},
      {"name", m.name},
      {"spec", m.spec},
      {"fingerprint", m.fingerprint},
      {"nodes", m.nodes},
      {"nnz", m.nnz},
      {"features", m.features},
      {"classes", m.classes},
      {"directed", m.directed},
      {"shards", m.shards},
      {"synthetic_features", m.synthetic_features},
      {"degrees", m.degrees},
      {"feature_seed", m.feature_seed},
      {"class_signal", m.class_signal},
      {"split_counts", m.split_counts},
      {"layout",
       {{"partitioner", layout.partitioner},
        {"parts", layout.parts},
        {"blocks", layout.blocks},
        {"permutation", layout.permutation},
        {"seed", layout.seed},
        {"orderings", layout.orderings},
        {"versions", layout.versions}}},
      {"info",
       {{"edges_undirected", info.edges_undirected},
        {"degree_min", info.degree_min},
        {"degree_max", info.degree_max},
        {"degree_mean", info.degree_mean},
        {"isolated", info.isolated}}},
      {"partition", m.partition}};
}

}  // namespace

ShardMeta shard_meta_of(const Dataset& d, const DatasetInfo& info, const std::string& fingerprint,
                        const GraphLayout& layout, int K, const nlohmann::json& partition) {
  ShardMeta m;
  m.name = d.name;
  m.spec = d.spec;
  m.fingerprint = fingerprint;
  m.nodes = info.nodes;
  m.nnz = info.nnz;
  m.features = d.features;
  m.classes = d.classes;
  m.shards = K;
  m.directed = d.directed;
  m.synthetic_features = d.synthetic_features;
  m.degrees = true;
  m.feature_seed = d.feature_seed;
  m.class_signal = d.class_signal;
  for (std::uint8_t s : d.split) ++m.split_counts[s];
  m.layout = layout;
  m.info = info;
  m.partition = partition;
  return m;
}

void check_shard_destination(const std::string& dir) {
  std::error_code ec;
  GCNLAB_CHECK(!fs::exists(dir, ec) || fs::is_directory(dir, ec), "cannot create directory '{}' (Not a directory)",
               dir);
}

void start_shard_directory(const std::string& dir, std::int64_t n, int K) {
  GCNLAB_CHECK(K >= 1 && K <= n, "--shards {}x{}: cannot cut {} vertices into {} blocks", K, K, n, K);
  std::error_code ec;
  fs::create_directories(dir, ec);
  GCNLAB_CHECK(!ec && fs::is_directory(dir), "cannot create directory '{}' ({})", dir, ec.message());
  fs::remove(fs::path(dir) / "meta.json", ec);  // the directory is incomplete until meta.json is back
}

void finish_shard_directory(const std::string& dir, const ShardMeta& meta) {
  // last: a directory without it is incomplete
  write_file_atomically((fs::path(dir) / "meta.json").string(), to_json(meta).dump(1) + "\n");
}

void write_shards(const Dataset& d, const DatasetInfo& info, const std::string& fingerprint, const InMemoryGraph& g,
                  int K, const nlohmann::json& partition, const std::string& dir, std::int64_t chunk_entries) {
  const std::int64_t n = g.n();
  start_shard_directory(dir, n, K);
  const GraphLayout& layout = g.layout();
  for (int id = 0; id < layout.orderings; ++id)
    write_file((fs::path(dir) / fmt::format("order{}.bin", id)).string(), g.ordering(id));
  write_file((fs::path(dir) / "labels.bin").string(), d.labels);
  write_file((fs::path(dir) / "split.bin").string(), d.split);
  if (!d.synthetic_features) write_file((fs::path(dir) / "x.bin").string(), d.x);
  {  // in original vertex order: row v of Âᵀ holds v's in-neighbours and its diagonal
    const HostCsr& t = *g.adjacency().a_hat_t;
    std::vector<std::int64_t> degrees(static_cast<std::size_t>(n));
    for (std::int64_t v = 0; v < n; ++v) degrees[v] = t.rowptr[v + 1] - t.rowptr[v] - 1;
    write_file((fs::path(dir) / "degrees.bin").string(), degrees);
  }

  Progress progress(fmt::format("writing {} x {} shards of {} version(s) to {}", K, K, layout.versions.size(), dir),
                    static_cast<double>(layout.versions.size()) * K * K, "shards");
  for (const auto& version : layout.versions) {
    ShardWriter writer({*g.adjacency().a_hat_t, 0, g.ordering(version[0]), 0, g.ordering(version[1])}, n, K, version,
                       dir, chunk_entries);
    for (int i = 0; i < K; ++i) writer.write_block(i, progress);
  }
  finish_shard_directory(dir, shard_meta_of(d, info, fingerprint, layout, K, partition));
}

Dataset read_shard_dataset(const std::string& dir) {
  auto store = std::make_shared<const ShardStore>(dir);
  const ShardMeta& m = store->meta();
  Dataset d;
  d.name = m.name;
  d.directed = m.directed;
  d.features = m.features;
  d.synthetic_features = m.synthetic_features;
  d.feature_seed = m.feature_seed;
  d.class_signal = m.class_signal;
  d.classes = m.classes;
  d.shards = std::move(store);
  return d;
}

}  // namespace gcnlab

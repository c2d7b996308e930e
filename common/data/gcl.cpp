// gcl:FILE — gcnlab's binary dataset format, written by `gcnlab prepare`.
//
//   bytes 0..7   magic "GCNLAB\0\1"
//   u64          length of the JSON header
//   JSON         {"name","nodes","nnz","features","classes","directed",
//                 "synthetic_features","feature_seed","class_signal"}
//   i64[n+1]     adjacency row pointers      i64[nnz]  column ids
//   f32[n*f]     features (absent when synthetic: regenerated from the seed)
//   i32[n]       labels (-1 = unlabeled)     u8[n]     split (0 none, 1 train, 2 val, 3 test)
// Little-endian, as every machine gcnlab targets.

#include <cstring>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "common/core/atomic_file.hpp"
#include "common/core/error.hpp"
#include "common/core/json.hpp"
#include "common/data/dataset.hpp"

namespace gcnlab {

namespace {

constexpr char kMagic[8] = {'G', 'C', 'N', 'L', 'A', 'B', '\0', '\1'};

template <class T>
void write_array(std::ofstream& out, const std::vector<T>& v) {
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

template <class T>
std::vector<T> read_array(std::ifstream& in, std::int64_t n, const std::string& path, const char* what) {
  GCNLAB_CHECK(n >= 0, "'{}': negative size for {}", path, what);
  const auto here = in.tellg();
  in.seekg(0, std::ios::end);
  const auto left = static_cast<std::int64_t>(in.tellg() - here);
  in.seekg(here);
  GCNLAB_CHECK(n <= left / static_cast<std::int64_t>(sizeof(T)), "'{}' is truncated (in {})", path, what);
  std::vector<T> v(n);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)));
  GCNLAB_CHECK(in.gcount() == static_cast<std::streamsize>(n * sizeof(T)), "'{}' is truncated (in {})", path, what);
  return v;
}

}  // namespace

void write_gcl(const Dataset& d, const std::string& path) {
  AtomicFile file(path, std::ios::binary);
  std::ofstream& out = file.stream();
  const nlohmann::json header = {{"name", d.name},
                                 {"nodes", d.nodes()},
                                 {"nnz", d.adj.nnz()},
                                 {"features", d.features},
                                 {"classes", d.classes},
                                 {"directed", d.directed},
                                 {"synthetic_features", d.synthetic_features},
                                 {"feature_seed", d.feature_seed},
                                 {"class_signal", d.class_signal}};
  const std::string text = header.dump();
  const std::uint64_t len = text.size();
  out.write(kMagic, 8);
  out.write(reinterpret_cast<const char*>(&len), 8);
  out.write(text.data(), static_cast<std::streamsize>(len));
  write_array(out, d.adj.rowptr);
  write_array(out, d.adj.col);
  if (!d.synthetic_features) write_array(out, d.x);
  write_array(out, d.labels);
  write_array(out, d.split);
  file.commit();
}

Dataset read_gcl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  GCNLAB_CHECK(in.good(), "cannot open '{}'", path);
  char magic[8] = {};
  std::uint64_t len = 0;
  in.read(magic, 8);
  GCNLAB_CHECK(in.gcount() == 8 && std::memcmp(magic, kMagic, 8) == 0, "'{}' is not a gcnlab .gcl file", path);
  in.read(reinterpret_cast<char*>(&len), 8);
  GCNLAB_CHECK(in.gcount() == 8 && len < (1u << 20), "'{}': malformed header", path);
  std::string text(len, '\0');
  in.read(text.data(), static_cast<std::streamsize>(len));
  GCNLAB_CHECK(in.gcount() == static_cast<std::streamsize>(len), "'{}' is truncated (in the header)", path);
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    fail("'{}': malformed header ({})", path, e.what());
  }
  Dataset d;
  try {
    d.name = h.at("name").get<std::string>();
    const auto n = json_get<std::int64_t>(h.at("nodes"));
    const auto nnz = json_get<std::int64_t>(h.at("nnz"));
    d.features = json_get<std::int64_t>(h.at("features"));
    d.classes = json_get<int>(h.at("classes"));
    d.directed = h.at("directed").get<bool>();
    d.synthetic_features = h.at("synthetic_features").get<bool>();
    d.feature_seed = json_get<std::uint64_t>(h.at("feature_seed"));
    d.class_signal = json_get<float>(h.at("class_signal"));
    // Bounds under which n + 1 and n * features fit an int64 (the arrays' lengths).
    constexpr std::int64_t kMaxNodes = std::int64_t{1} << 40;
    GCNLAB_CHECK(n >= 1 && n <= kMaxNodes && nnz >= 0 && d.features >= 1 &&
                     d.features <= std::numeric_limits<std::int64_t>::max() / (4 * n),
                 "'{}': malformed header ({} vertices, {} edges, {} features)", path, n, nnz, d.features);
    d.adj.rows = d.adj.cols = n;
    d.adj.rowptr = read_array<std::int64_t>(in, n + 1, path, "row pointers");
    d.adj.col = read_array<std::int64_t>(in, nnz, path, "column ids");
    d.adj.val.assign(nnz, 1.f);
    if (!d.synthetic_features) d.x = read_array<float>(in, n * d.features, path, "features");
    d.labels = read_array<std::int32_t>(in, n, path, "labels");
    d.split = read_array<std::uint8_t>(in, n, path, "split");
    GCNLAB_CHECK(d.adj.rowptr.front() == 0 && d.adj.rowptr.back() == nnz, "'{}': inconsistent row pointers", path);
    for (std::int64_t i = 0; i < n; ++i)
      GCNLAB_CHECK(d.adj.rowptr[i] <= d.adj.rowptr[i + 1], "'{}': decreasing row pointers", path);
    for (std::int64_t c : d.adj.col) GCNLAB_CHECK(c >= 0 && c < n, "'{}': column id {} out of range", path, c);
  } catch (const nlohmann::json::exception& e) {
    fail("'{}': malformed header ({})", path, e.what());
  }
  return d;
}

}  // namespace gcnlab

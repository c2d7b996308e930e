// libFuzzer targets for every file parser (issue 16): one source, one binary
// per parser (GCNLAB_FUZZ_TARGET selects it; fuzz/CMakeLists.txt). Each input
// is written where the parser expects a file and parsed; a gcnlab::Error (the
// one clear message a user gets for a bad file) is the expected outcome of a
// malformed input. Anything else (a crash, an ASan or UBSan report, another
// exception type, an allocation over -malloc_limit_mb) is a finding.

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/core/error.hpp"
#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"
#include "common/data/npz.hpp"
#include "common/data/pickle.hpp"
#include "common/data/shards.hpp"
#include "common/results/checkpoint.hpp"
#include "common/results/npy.hpp"
#include "partitioners/partition.hpp"

namespace fs = std::filesystem;
using namespace gcnlab;

namespace {

// A private scratch directory per fuzzing process.
const fs::path& scratch() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("gcnlab-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(d);
    std::atexit([] { fs::remove_all(fs::temp_directory_path() / ("gcnlab-fuzz-" + std::to_string(::getpid()))); });
    return d;
  }();
  return dir;
}

void write_plain(const fs::path& p, const std::uint8_t* data, std::size_t size) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                             static_cast<std::streamsize>(size));
}

std::string put(const std::string& name, const std::uint8_t* data, std::size_t size) {
  const fs::path p = scratch() / name;
  fs::create_directories(p.parent_path());
  write_plain(p, data, size);
  return p.string();
}

// The files of fuzz/fixtures/DIR, sorted (a selector byte picks one).
std::vector<fs::path> fixture_files(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(GCNLAB_FUZZ_FIXTURES) / dir))
    if (e.is_regular_file() && e.path().filename() != "meta.json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// A fresh copy of fuzz/fixtures/DIR in the scratch directory, with the file the
// input's first byte selects replaced by the rest of the input (through `write`).
fs::path fixture_with(const std::string& dir, const std::uint8_t* data, std::size_t size,
                      const std::function<void(const fs::path&, const std::uint8_t*, std::size_t)>& write) {
  const std::vector<fs::path> files = fixture_files(dir);
  const fs::path root = fs::path(GCNLAB_FUZZ_FIXTURES) / dir, copy = scratch() / dir;
  fs::remove_all(copy);
  fs::copy(root, copy, fs::copy_options::recursive);
  if (size == 0) return copy;
  const fs::path target = copy / fs::relative(files[data[0] % files.size()], root);
  write(target, data + 1, size - 1);
  return copy;
}

void write_gzip(const fs::path& p, const std::uint8_t* data, std::size_t size) {
  gzFile f = gzopen(p.c_str(), "wb");
  if (size) gzwrite(f, data, static_cast<unsigned>(size));
  gzclose(f);
}

// Reads every byte a run could read of a prepared directory: each stored
// version's blocks in both directions, whole and by column ranges, every
// ordering's vertex list, and the vertex data of every vertex.
void read_everything(const ShardStore& g) {
  const std::int64_t n = g.n();
  const std::int64_t half = n / 2;
  for (const auto& [r, c] : g.layout().versions) {
    (void)g.block(Direction::forward, r, 0, n, c, 0, n);
    (void)g.block(Direction::backward, c, 0, half, r, half, n);
  }
  for (int id = 0; id < g.layout().orderings; ++id) (void)g.vertices(id, 0, n);
  std::vector<std::int64_t> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  (void)g.labels(all);
  (void)g.split(all);
  std::vector<float> x(static_cast<std::size_t>(n * g.meta().features));
  if (!g.meta().synthetic_features) g.features(all, 0, g.meta().features, x.data());
  const std::vector<Graph::ColumnRange> ranges = {{0, half}, {half, n}};
  for (int d = 0; d < 2; ++d)  // ordering 0 (throws when only permuted versions are stored)
    g.column_blocks(d ? Direction::backward : Direction::forward, 0, n, ranges, [](HostCsr) {});
}

// Walks a parsed pickle the way the Planetoid reader does: arrays, dict entries.
void walk(const pickle::Ref& r, int depth) {
  if (!r || depth > 8) return;
  try {
    const pickle::Array a = pickle::as_array(r, "fuzz");
    for (std::int64_t k = 0; k < std::min<std::int64_t>(a.size(), 64); ++k) (void)a.at(k);
  } catch (const Error&) {
  }
  for (const auto& item : r->items) walk(item, depth + 1);
  for (const auto& [key, value] : r->entries) walk(key, depth + 1), walk(value, depth + 1);
  walk(r->state, depth + 1);
}

void parse(const std::uint8_t* data, std::size_t size) {
  const std::string t = GCNLAB_FUZZ_TARGET;
  if (t == "mtx") {
    load_dataset("mtx:" + put("graph.mtx", data, size) + ",features=3,classes=2");
  } else if (t == "edges") {
    load_dataset("edges:" + put("graph.txt", data, size) + ",features=3,classes=2");
  } else if (t == "pickle") {
    walk(pickle::load(std::string(reinterpret_cast<const char*>(data), size), "fuzz").root(), 0);
  } else if (t == "gcl") {
    read_gcl(put("graph.gcl", data, size));
  } else if (t == "shards") {  // meta.json of a prepared directory (its shard files absent)
    put("prepared/meta.json", data, size);
    ShardStore store((scratch() / "prepared").string());
  } else if (t == "shard-files") {  // one binary file of a prepared directory (row offsets, columns, values,
                                     // orderings, labels, split, features) against its meta.json
    read_everything(ShardStore(fixture_with("prepared", data, size, write_plain).string()));
  } else if (t == "ogb-csv") {  // one member of an OGB csv.gz directory, gzipped (odd selectors: written as given)
    const bool raw = size > 0 && (data[0] & 0x80);
    load_dataset("ogb:" + fixture_with("ogb", data, size, raw ? write_plain : write_gzip).string());
  } else if (t == "partition") {
    read_partition(put("parts.txt", data, size), 64, 4);
  } else if (t == "npy") {
    read_npy(put("w.npy", data, size));
  } else if (t == "checkpoint") {  // checkpoint.json of an epoch directory (its matrices absent)
    put("ck/epoch-000001/checkpoint.json", data, size);
    read_checkpoint((scratch() / "ck").string());
  } else if (t == "npz") {  // every member of an archive, as the reddit: and ogb: loaders read them
    const NpzArchive a(put("a.npz", data, size));
    for (const std::string& name : a.names()) {
      try {
        if (a.header(name).descr.find('S') != std::string::npos) (void)a.read_bytes(name);
        else (void)a.read<double>(name);
      } catch (const Error&) {
      }
    }
  } else if (t == "spec") {
    parse_dataset_spec(std::string(reinterpret_cast<const char*>(data), size));
  } else {
    std::fprintf(stderr, "unknown fuzz target %s\n", GCNLAB_FUZZ_TARGET);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    parse(data, size);
  } catch (const Error&) {
    // a clear error: the expected answer to a malformed file
  }
  return 0;
}

// libFuzzer targets for every file parser (issue 16): one source, one binary
// per parser (GCNLAB_FUZZ_TARGET selects it; fuzz/CMakeLists.txt). Each input
// is written where the parser expects a file and parsed; a gcnlab::Error (the
// one clear message a user gets for a bad file) is the expected outcome of a
// malformed input. Anything else (a crash, an ASan or UBSan report, another
// exception type, an allocation over -malloc_limit_mb) is a finding.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/core/error.hpp"
#include "common/data/dataset.hpp"
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

std::string put(const std::string& name, const std::uint8_t* data, std::size_t size) {
  const fs::path p = scratch() / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                             static_cast<std::streamsize>(size));
  return p.string();
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

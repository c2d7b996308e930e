// Outputs appear complete or not at all (common/core/atomic_file.hpp): an
// uncommitted write leaves the previous file and no temporary behind; a
// committed one replaces it whole; an unwritable path is one clear error.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/core/atomic_file.hpp"
#include "common/core/fingerprint.hpp"
#include "common/results/npy.hpp"

using namespace gcnlab;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The directory's entries other than `keep`.
int others(const fs::path& dir, const fs::path& keep) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path() != keep;
  return n;
}

}  // namespace

TEST_CASE("atomic files: complete or absent, never truncated", "[files]") {
  const fs::path dir = fs::temp_directory_path() / ("gcnlab-atomic-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path path = dir / "run.json";
  write_file_atomically(path.string(), "old\n");
  REQUIRE(slurp(path) == "old\n");

  {  // a writer that fails (or is killed) before commit
    AtomicFile f(path.string());
    f.stream() << "new, half writ";
    CHECK(slurp(path) == "old\n");  // the destination is untouched while it writes
  }
  CHECK(slurp(path) == "old\n");
  CHECK(others(dir, path) == 0);  // no temporary left behind

  {
    AtomicFile f(path.string());
    f.stream() << "new\n";
    f.commit();
  }
  CHECK(slurp(path) == "new\n");
  CHECK(others(dir, path) == 0);

  const std::string missing = (dir / "no-such-dir" / "w.npy").string();
  CHECK_THROWS_WITH(write_file_atomically(missing, "x"), Catch::Contains("cannot write '" + missing + "'"));
  CHECK_THROWS_WITH(write_npy(missing, 1, 1, {1.f}), Catch::Contains("cannot write"));
  fs::remove_all(dir);
}

TEST_CASE("fingerprints: XXH3-64 and, for records written before it, FNV-1a 64 (reference values)", "[files]") {
  // XXH3_64bits("") and FNV-1a 64 of "" and "a", as their specifications give them
  CHECK(Fingerprint().hex() == "xxh3:2d06800538d394c2");
  CHECK(Fingerprint(Fingerprint::Kind::fnv1a).hex() == "cbf29ce484222325");
  CHECK(Fingerprint(Fingerprint::Kind::fnv1a).add("a").hex() == "af63dc4c8601ec8c");
  // streamed in pieces = in one piece
  const std::string text(100000, 'g');
  Fingerprint pieces;
  for (std::size_t i = 0; i < text.size(); i += 333) pieces.add(std::string_view(text).substr(i, 333));
  CHECK(pieces.hex() == Fingerprint().add(text).hex());
  CHECK(Fingerprint().add("a").hex() != Fingerprint().add("b").hex());
  CHECK(Fingerprint::kind_of("af63dc4c8601ec8c") == Fingerprint::Kind::fnv1a);
  CHECK(Fingerprint::kind_of("xxh3:2d06800538d394c2") == Fingerprint::Kind::xxh3);
  CHECK(Fingerprint::kind_of("") == Fingerprint::Kind::xxh3);
}

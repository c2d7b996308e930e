// Outputs appear complete or not at all (common/core/atomic_file.hpp): an
// uncommitted write leaves the previous file and no temporary behind; a
// committed one replaces it whole; an unwritable path is one clear error. A
// file written in parts (PartFile), and shards written in parts, equal it
// written whole.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/core/atomic_file.hpp"
#include "common/core/blocks.hpp"
#include "common/core/fingerprint.hpp"
#include "common/core/progress.hpp"
#include "common/data/shards.hpp"
#include "common/results/history.hpp"
#include "common/results/npy.hpp"
#include "common/results/results.hpp"

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

TEST_CASE("part files: written at offsets by several writers, absent until committed whole", "[files]") {
  const fs::path dir = fs::temp_directory_path() / ("gcnlab-parts-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "ids.bin").string();
  PartFile::create(path, 6 * 4);
  {
    const std::int32_t tail[] = {4, 5, 6}, head[] = {1, 2, 3};
    PartFile late(path), early(path);  // two writers at once, the later part first
    late.write_at<std::int32_t>(3 * 4, tail);
    early.write_at<std::int32_t>(0, head);
    late.close();
    early.close();
  }
  CHECK(!fs::exists(path));  // not until its creator commits it
  PartFile::commit(path);
  std::ifstream in(path, std::ios::binary);
  std::vector<std::int32_t> got(6);
  in.read(reinterpret_cast<char*>(got.data()), 6 * 4);
  CHECK(got == std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
  CHECK(others(dir, path) == 0);
  const std::string missing = (dir / "no-such-dir" / "x.bin").string();
  CHECK_THROWS_WITH(PartFile::create(missing, 8), Catch::Contains("cannot write '" + missing + "'"));
  fs::remove_all(dir);
}

TEST_CASE("shards: a row block cut between writers at any rows equals it written whole", "[files]") {
  // Âᵀ-like rows of 11 vertices (a dense first row, empty rows, a diagonal), K = 3, a column ordering
  const std::int64_t n = 11;
  const int K = 3;
  HostCsr t;
  t.rows = t.cols = n;
  t.rowptr = {0};
  for (std::int64_t v = 0; v < n; ++v) {
    for (std::int64_t u = 0; u < n; ++u)
      if (v == 0 || u == v || (v % 4 != 3 && (u * 7 + v * 3) % 5 == 0)) {
        t.col.push_back(u);
        t.val.push_back(static_cast<float>(v * n + u) / 8.f);
      }
    t.rowptr.push_back(t.nnz());
  }
  const std::vector<std::int64_t> order{3, 1, 4, 10, 5, 9, 2, 6, 0, 8, 7};
  const fs::path whole = fs::temp_directory_path() / ("gcnlab-shards-whole-" + std::to_string(::getpid()));
  const fs::path cut = fs::temp_directory_path() / ("gcnlab-shards-cut-" + std::to_string(::getpid()));
  for (const auto& d : {whole, cut}) fs::remove_all(d), fs::create_directories(d);
  Progress quiet("", 0, "");
  const ShardRows rows{t, 0, {}, 0, order};
  ShardWriter one(rows, n, K, {0, 1}, whole.string(), 5);
  for (int i = 0; i < K; ++i) one.write_block(i, quiet);

  // block 0 (rows 0-3) cut at 1 and 3, block 1 (4-7) at 6, block 2 (8-10) whole: a chunk of 2 crosses the parts
  ShardWriter parts(rows, n, K, {0, 1}, cut.string(), 2);
  const std::vector<std::vector<std::int64_t>> cuts{{0, 1, 3, 4}, {4, 6, 8}, {8, 11}};
  for (int i = 0; i < K; ++i) {
    std::vector<std::int64_t> total(K, 0);
    std::vector<std::vector<std::int64_t>> before;
    for (std::size_t k = 0; k + 1 < cuts[i].size(); ++k) {
      before.push_back(total);
      const std::vector<std::int64_t> e = parts.entries(i, cuts[i][k], cuts[i][k + 1]);
      for (int j = 0; j < K; ++j) total[j] += e[j];
    }
    parts.create(i, total);
    for (std::size_t k = before.size(); k-- > 0;)  // the parts in reverse: each at its own offsets
      parts.write_part(i, cuts[i][k], cuts[i][k + 1], before[k], total, quiet);
    parts.commit(i);
  }
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < K; ++j) {
      const std::string name = "adj-0-1-" + std::to_string(i) + "-" + std::to_string(j) + ".bin";
      CAPTURE(name);
      CHECK(slurp(whole / name) == slurp(cut / name));
    }
  CHECK(others(cut, cut / "none") == K * K);  // no temporary left
  for (const auto& d : {whole, cut}) fs::remove_all(d);
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

TEST_CASE("fingerprints continue from another's state: a stream fed in turn hashes as one", "[files]") {
  const std::string text(3000, 'x');  // past XXH3's internal buffer of 256 bytes
  for (const auto kind : {Fingerprint::Kind::xxh3, Fingerprint::Kind::fnv1a}) {
    Fingerprint first(kind), second(kind), third(kind);
    first.add(std::string_view(text).substr(0, 1000));
    second.add("anything");  // its own state is replaced
    second.restore(first.state());
    second.add(std::string_view(text).substr(1000, 1500));
    third.restore(second.state());
    third.add(std::string_view(text).substr(2500));
    CHECK(third.hex() == Fingerprint(kind).add(text).hex());
  }
  CHECK_THROWS(Fingerprint().restore(Fingerprint(Fingerprint::Kind::fnv1a).state()));
}

TEST_CASE("block_of inverts block_range", "[files]") {
  for (std::int64_t n = 1; n <= 40; ++n)
    for (int p = 1; p <= 12; ++p)
      for (int k = 0; k < p; ++k) {
        const BlockRange b = block_range(n, p, k);
        for (std::int64_t i = b.first; i < b.end(); ++i) REQUIRE(block_of(n, p, i) == k);
      }
  CHECK(block_of(std::int64_t{1} << 40, 7, (std::int64_t{1} << 40) - 1) == 6);
}

TEST_CASE("npy row access: rows written in place by several writers read back by others", "[files]") {
  const auto dir = std::filesystem::temp_directory_path() / ("gcnlab-npy-rows-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "x.npy").string();
  const std::int64_t n = 7, f = 5;
  gcnlab::create_npy(path, n, f);
  // two writers: rows {6, 0, 3} x columns [0, 2), and every row x columns [2, 5)
  const std::vector<std::int64_t> some = {6, 0, 3}, all = {0, 1, 2, 3, 4, 5, 6};
  std::vector<float> a, b;
  for (const std::int64_t v : some)
    for (std::int64_t c = 0; c < 2; ++c) a.push_back(static_cast<float>(10 * v + c));
  for (const std::int64_t v : all)
    for (std::int64_t c = 2; c < 5; ++c) b.push_back(static_cast<float>(10 * v + c));
  gcnlab::write_npy_rows(path, some, 0, 2, a);
  gcnlab::write_npy_rows(path, all, 2, 3, b);
  const gcnlab::NpyMatrix whole = gcnlab::read_npy(path);  // a plain .npy: numpy reads it too
  REQUIRE(whole.rows == n);
  REQUIRE(whole.cols == f);
  for (std::int64_t v = 0; v < n; ++v)
    for (std::int64_t c = 0; c < f; ++c) {
      const bool written = c >= 2 || v == 6 || v == 0 || v == 3;
      CHECK(whole.data[v * f + c] == (written ? static_cast<float>(10 * v + c) : 0.f));
    }
  const std::vector<std::int64_t> want = {3, 6};
  CHECK(gcnlab::read_npy_rows(path, want, 1, 3) == std::vector<float>{31, 32, 33, 61, 62, 63});
  const std::vector<std::int64_t> beyond = {7};
  CHECK_THROWS_WITH(gcnlab::read_npy_rows(path, beyond, 0, 1), Catch::Contains("has 7 rows, row 7 is needed"));
  CHECK_THROWS_WITH(gcnlab::read_npy_rows(path, want, 4, 2), Catch::Contains("has 5 columns, [4, 6) are needed"));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 4);
  CHECK_THROWS_WITH(gcnlab::npy_shape(path), Catch::Contains("is truncated"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("summary: an epoch slower than 2x the median is listed and left out of the epoch time", "[files]") {
  gcnlab::RunResult r;
  const std::vector<double> times = {9.0, 0.10, 0.12, 0.50, 0.11, 0.30};  // epoch 0 warms up
  for (std::size_t e = 0; e < times.size(); ++e) r.epochs.push_back({.epoch = static_cast<int>(e), .time_s = times[e]});
  const nlohmann::json s = gcnlab::summary_json(r);
  CHECK(s["epoch_time_median_s"].get<double>() == Approx(0.12));
  CHECK(s["slow_epochs"] == nlohmann::json::array({3, 5}));  // 0.50 and 0.30 > 0.24
  CHECK(s["epoch_time_s"].get<double>() == Approx((0.10 + 0.12 + 0.11) / 3));
  r.epochs[3].time_s = r.epochs[5].time_s = 0.2;  // within 2x: all kept
  CHECK(gcnlab::summary_json(r)["slow_epochs"].empty());
  CHECK(gcnlab::summary_json(r)["epoch_time_s"].get<double>() == Approx((0.10 + 0.12 + 0.2 + 0.11 + 0.2) / 5));
}

TEST_CASE("summary of a resumed run: the times of its own segment, the losses and accuracies of all", "[files]") {
  gcnlab::RunResult r;
  // epochs 0-3 from the checkpoint's history (another machine: slow), 4-7 this segment (4 warms up)
  const std::vector<double> times = {1.0, 1.0, 1.0, 1.0, 5.0, 0.10, 0.12, 0.11};
  const std::vector<double> val = {0.2, 0.9, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8};
  for (std::size_t e = 0; e < times.size(); ++e)
    r.epochs.push_back({.epoch = static_cast<int>(e), .loss = 10.0 - e, .val_acc = val[e], .time_s = times[e]});
  r.segment_start = 4;
  const nlohmann::json s = gcnlab::summary_json(r);
  CHECK(s["epoch_time_s"].get<double>() == Approx((0.10 + 0.12 + 0.11) / 3));
  CHECK(s["slow_epochs"].empty());
  CHECK(s["best_val_acc"].get<double>() == Approx(0.9));  // epoch 1, of the earlier segment
  CHECK(s["final_loss"].get<double>() == 3.0);
}

TEST_CASE("run history: JSON round trip, a segment per start, a resume from an older checkpoint drops the rest",
          "[files]") {
  gcnlab::RunHistory h;
  h.begin(0, {{"algo", "1d"}, {"ranks", 4}});
  for (int e = 0; e < 6; ++e) {
    gcnlab::EpochMetrics m{.epoch = e, .loss = 1.0 / (e + 1), .time_s = 0.5};
    m.wire_bytes[static_cast<int>(gcnlab::Category::bcast_dense)] = 1000.0 * e;
    h.add(m);
  }
  const gcnlab::RunHistory back = gcnlab::history_from_json(gcnlab::history_json(h));
  REQUIRE(back.epochs.size() == 6);
  CHECK(back.epochs[5].loss == 1.0 / 6);  // doubles exactly (JSON's shortest round trip)
  CHECK(back.epochs[5].wire_bytes[static_cast<int>(gcnlab::Category::bcast_dense)] == 5000.0);
  CHECK(gcnlab::history_json(back) == gcnlab::history_json(h));
  gcnlab::RunHistory resumed = back;
  resumed.begin(4, {{"algo", "2d"}, {"ranks", 2}});  // from the checkpoint of epoch 4: epochs 4 and 5 run again
  REQUIRE(resumed.epochs.size() == 4);
  resumed.add({.epoch = 4});
  CHECK(resumed.epochs.back().segment == 1);
  CHECK(resumed.segments[1]["first_epoch"] == 4);
  CHECK(resumed.segments[1]["segment"] == 1);
  CHECK_THROWS(gcnlab::history_from_json(nlohmann::json{{"segments", 3}, {"epochs", nlohmann::json::array()}}));
}

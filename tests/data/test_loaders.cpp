// Loaders and generators: every Matrix Market variant on small files written
// here, their error paths, Planetoid (real files when GCNLAB_DATA_DIR is set,
// truncated copies), the gcl round trip, generator determinism, normalisation.

#include <zlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>

#include "common/core/error.hpp"
#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"
#include "common/data/line_reader.hpp"
#include "common/data/npz.hpp"
#include "common/data/pickle.hpp"
#include "common/data/shards.hpp"
#include "common/results/npy.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / fmt::format("gcnlab_test_{}", ::getpid());
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

std::string write_file(const std::string& name, const std::string& text) {
  const fs::path p = temp_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

std::vector<std::pair<std::int64_t, std::int64_t>> edges_of(const HostCsr& a) {
  std::vector<std::pair<std::int64_t, std::int64_t>> e;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k) e.emplace_back(i, a.col[k]);
  return e;
}

const char* data_dir() { return std::getenv("GCNLAB_DATA_DIR"); }

}  // namespace

TEST_CASE("Matrix Market variants", "[data][mtx]") {
  using E = std::vector<std::pair<std::int64_t, std::int64_t>>;
  SECTION("pattern general is directed; diagonal dropped; duplicates merged") {
    const auto f = write_file("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n% comment\n\n3 3 5\n1 2\n2 3\n3 3\n1 2\n3 1\n");
    const Dataset d = load_dataset("mtx:" + f + ",features=4,classes=2");
    CHECK(d.directed);
    CHECK(edges_of(d.adj) == E{{0, 1}, {1, 2}, {2, 0}});
    CHECK(d.features == 4);
    CHECK(d.classes == 2);
  }
  SECTION("real symmetric mirrors the lower triangle") {
    const auto f = write_file("s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n2 1 -1.5e0\n3 1 2\n3 3 7\n");
    const Dataset d = load_dataset("mtx:" + f);
    CHECK_FALSE(d.directed);
    CHECK(edges_of(d.adj) == E{{0, 1}, {0, 2}, {1, 0}, {2, 0}});
  }
  SECTION("integer general with symmetric structure is undirected") {
    const auto f = write_file("i.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 3\n2 1 -4\n");
    CHECK_FALSE(load_dataset("mtx:" + f).directed);
  }
  SECTION("skew-symmetric") {
    const auto f = write_file("k.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n3 2 1.0\n");
    const Dataset d = load_dataset("mtx:" + f);
    CHECK(edges_of(d.adj) == E{{1, 2}, {2, 1}});
  }
  SECTION("gzip-compressed") {
    const fs::path p = temp_dir() / "z.mtx.gz";
    gzFile gz = gzopen(p.c_str(), "wb");
    const std::string text = "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n2 1\n";
    gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
    gzclose(gz);
    CHECK(load_dataset("mtx:" + p.string()).adj.nnz() == 2);
  }
}

TEST_CASE("Matrix Market errors name the problem", "[data][mtx][errors]") {
  auto error_of = [](const std::string& name, const std::string& text) {
    const auto f = write_file(name, text);
    try {
      load_dataset("mtx:" + f);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of("e1.mtx", "%MatrixMarket matrix coordinate real general\n1 1 0\n"), Catch::Contains("header"));
  CHECK_THAT(error_of("e2.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n2 3 1\n"),
             Catch::Contains("3 entries declared but 2 found"));
  CHECK_THAT(error_of("e3.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 1\n2 3 1\n"),
             Catch::Contains("more entries"));
  CHECK_THAT(error_of("e4.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n"),
             Catch::Contains("out of range"));
  CHECK_THAT(error_of("e5.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 abc\n"),
             Catch::Contains("non-numeric"));
  CHECK_THAT(error_of("e6.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 0\n"), Catch::Contains("square"));
  CHECK_THAT(error_of("e7.mtx", "%%MatrixMarket matrix coordinate complex general\n3 3 0\n"),
             Catch::Contains("unsupported field"));
  CHECK_THAT(error_of("e8.mtx", "%%MatrixMarket matrix coordinate real general\n3 three 0\n"),
             Catch::Contains("size line"));
  CHECK_THAT(error_of("e9.mtx", "%%MatrixMarket matrix array real general\n3 3\n"), Catch::Contains("coordinate"));
  REQUIRE_THROWS_WITH(load_dataset("mtx:/nonexistent/x.mtx"), Catch::Contains("cannot open"));
  REQUIRE_THROWS_WITH(load_dataset("nosuch:foo"), Catch::Contains("unknown dataset kind"));
  REQUIRE_THROWS_WITH(load_dataset("sbm:nodes=abc"), Catch::Contains("not an integer"));
  REQUIRE_THROWS_WITH(load_dataset("sbm:nodez=10"), Catch::Contains("unknown argument"));
}

TEST_CASE("Planetoid: Cora and CiteSeer from the original files", "[data][planetoid]") {
  if (!data_dir()) {
    WARN("GCNLAB_DATA_DIR is not set: skipping the real-data checks");
    return;
  }
  const std::string dir = std::string(data_dir()) + "/planetoid/";
  const Dataset cora = load_dataset("planetoid:" + dir + "cora");
  const DatasetInfo ci = dataset_info(cora);
  CHECK(ci.nodes == 2708);
  CHECK(ci.edges_undirected == 5278);
  CHECK(cora.features == 1433);
  CHECK(cora.classes == 7);
  CHECK(cora.count(ew::kTrain) == 140);
  CHECK(cora.count(ew::kVal) == 500);
  CHECK(cora.count(ew::kTest) == 1000);
  CHECK_FALSE(cora.directed);
  // standard split: train = 0..139 (20 per class), val = 140..639
  std::vector<int> per_class(7, 0);
  for (std::int64_t v = 0; v < 140; ++v) per_class[cora.labels[v]]++;
  CHECK(per_class == std::vector<int>(7, 20));
  // row-normalised binary features
  for (std::int64_t v = 0; v < cora.nodes(); v += 97) {
    double s = 0;
    for (std::int64_t c = 0; c < cora.features; ++c) s += cora.x[v * cora.features + c];
    CHECK(s == Approx(1.0).epsilon(1e-5));
  }
  const Dataset raw = load_dataset("planetoid:" + dir + "cora,row-normalize=0");
  CHECK(std::all_of(raw.x.begin(), raw.x.end(), [](float v) { return v == 0.f || v == 1.f; }));

  const Dataset cs = load_dataset("planetoid:" + dir + "citeseer");
  const DatasetInfo si = dataset_info(cs);
  CHECK(si.nodes == 3327);
  CHECK(si.edges_undirected == 4552);
  CHECK(cs.features == 3703);
  CHECK(cs.classes == 6);
  CHECK(cs.count(ew::kTrain) == 120);
  CHECK(cs.count(ew::kVal) == 500);
  CHECK(cs.count(ew::kTest) == 1000);
  // the 15 isolated test-range vertices missing from test.index: zero features, unlabeled
  CHECK(std::count(cs.labels.begin(), cs.labels.end(), -1) == 15);
}

TEST_CASE("Planetoid: truncated and missing files are clear errors", "[data][planetoid][errors]") {
  if (!data_dir()) {
    WARN("GCNLAB_DATA_DIR is not set: skipping");
    return;
  }
  const fs::path dir = temp_dir() / "planetoid";
  fs::create_directories(dir);
  for (const char* ext : {"x", "tx", "allx", "y", "ty", "ally", "graph", "test.index"})
    fs::copy_file(fs::path(data_dir()) / "planetoid" / (std::string("ind.cora.") + ext), dir / (std::string("ind.cora.") + ext),
                  fs::copy_options::overwrite_existing);
  for (const char* ext : {"allx", "graph", "ty"}) {
    const fs::path f = dir / (std::string("ind.cora.") + ext);
    const auto backup = dir / "backup";
    fs::copy_file(f, backup, fs::copy_options::overwrite_existing);
    fs::resize_file(f, fs::file_size(f) / 2);
    DYNAMIC_SECTION("truncated " << ext) {
      REQUIRE_THROWS_WITH(load_dataset("planetoid:" + (dir / "cora").string()), Catch::Contains("truncated"));
    }
    fs::copy_file(backup, f, fs::copy_options::overwrite_existing);
  }
  REQUIRE_THROWS_WITH(load_dataset("planetoid:" + (dir / "nosuch").string()), Catch::Contains("cannot open"));
}

TEST_CASE("gcl round trip, and bad vertex data is rejected", "[data][gcl]") {
  Dataset d = load_dataset("sbm:nodes=200,classes=3,avg-degree=4,features=5,seed=2,directed=1");
  const auto path = (temp_dir() / "d.gcl").string();
  write_gcl(d, path);
  const Dataset r = load_dataset("gcl:" + path);
  CHECK(r.adj.rowptr == d.adj.rowptr);
  CHECK(r.adj.col == d.adj.col);
  CHECK(r.labels == d.labels);
  CHECK(r.split == d.split);
  CHECK(r.directed);
  std::vector<float> a(5), b(5);
  d.feature_rows(std::vector<std::int64_t>{17}, 0, 5, a.data());
  r.feature_rows(std::vector<std::int64_t>{17}, 0, 5, b.data());
  CHECK(a == b);

  // stored (non-synthetic) features with a NaN, and a label out of range
  Dataset bad = d;
  bad.synthetic_features = false;
  bad.x.assign(d.nodes() * d.features, 0.5f);
  bad.x[3 * d.features + 1] = std::nanf("");
  write_gcl(bad, path);
  REQUIRE_THROWS_WITH(load_dataset("gcl:" + path), Catch::Contains("feature (3, 1) is nan"));
  bad.x[3 * d.features + 1] = 0;
  bad.labels[5] = 99;
  write_gcl(bad, path);
  REQUIRE_THROWS_WITH(load_dataset("gcl:" + path), Catch::Contains("label 99 of vertex 5 is out of range"));
  std::ofstream(path) << "not a gcl file";
  REQUIRE_THROWS_WITH(load_dataset("gcl:" + path), Catch::Contains("not a gcnlab .gcl file"));
}

TEST_CASE("generators are deterministic and shaped as specified", "[data][generators]") {
  const Dataset a = load_dataset("sbm:nodes=2000,classes=4,avg-degree=10,features=8,seed=1,intra=0.8");
  const Dataset b = load_dataset("sbm:nodes=2000,classes=4,avg-degree=10,features=8,seed=1,intra=0.8");
  const Dataset c = load_dataset("sbm:nodes=2000,classes=4,avg-degree=10,features=8,seed=2,intra=0.8");
  CHECK(a.adj == b.adj);
  CHECK(a.labels == b.labels);
  CHECK_FALSE(a.adj == c.adj);
  CHECK(static_cast<double>(a.adj.nnz()) / a.nodes() == Approx(10).epsilon(0.1));
  CHECK(structurally_symmetric(a.adj));
  // planted partition: most edges stay inside a class (intra = 0.8 plus chance 0.2 / 4)
  std::int64_t inside = 0;
  for (std::int64_t u = 0; u < a.nodes(); ++u)
    for (std::int64_t k = a.adj.rowptr[u]; k < a.adj.rowptr[u + 1]; ++k) inside += a.labels[u] == a.labels[a.adj.col[k]];
  CHECK(static_cast<double>(inside) / a.adj.nnz() > 0.75);

  const Dataset r = load_dataset("rmat:scale=10,edge-factor=8,features=4,classes=3,seed=1");
  CHECK(r.nodes() == 1024);
  CHECK(structurally_symmetric(r.adj));
  const DatasetInfo info = dataset_info(r);
  CHECK(info.degree_max > 10 * info.degree_mean);  // skewed
  CHECK(r.adj == load_dataset("rmat:scale=10,edge-factor=8,features=4,classes=3,seed=1").adj);
}

TEST_CASE("normalised adjacency: D^-1/2 (A + I) D^-1/2, Âᵀ for directed graphs", "[data][graph]") {
  const auto f = write_file("n.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n1 3\n2 3\n");
  const Dataset d = load_dataset("mtx:" + f);
  const NormalizedAdjacency g = normalized_graph(d);
  // A + I rows: {0,1,2}, {1,2}, {2}: degrees 3, 2, 1
  const double deg[3] = {3, 2, 1};
  const HostCsr& a = *g.a_hat;
  REQUIRE(a.nnz() == 6);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k)
      CHECK(a.val[k] == Approx(1 / std::sqrt(deg[i] * deg[a.col[k]])));
  CHECK(*g.a_hat_t == transpose(a));
  CHECK(g.a_hat_t != g.a_hat);
}

TEST_CASE("edge passes: concurrent emits give the sorted, merged CSR; the graph is normalised in its own storage",
          "[data][graph]") {
  // 3000 draws over 500 vertices with self-loops and duplicates, emitted from OpenMP threads
  const std::int64_t n = 500, m = 3000;
  auto edge = [](std::int64_t e) {
    return std::array<std::int64_t, 2>{static_cast<std::int64_t>((e * 7919) % 500),
                                       static_cast<std::int64_t>((e * e * 31 + 3) % 500) / (e % 5 + 1)};
  };
  for (bool symmetrize : {false, true}) {
    auto build = [&] {
      return csr_from_edge_passes(
          n,
          [&](const EdgeEmit& emit) {
#pragma omp parallel for num_threads(4)
            for (std::int64_t e = 0; e < m; ++e) emit(edge(e)[0], edge(e)[1]);
          },
          symmetrize);
    };
    const HostCsr a = build();
    std::vector<Coo> coo;  // the reference: sort, merge
    for (std::int64_t e = 0; e < m; ++e) {
      const auto [u, v] = edge(e);
      if (u == v) continue;
      coo.push_back({u, v, 1.f});
      if (symmetrize) coo.push_back({v, u, 1.f});
    }
    const HostCsr ref = csr_from_coo(n, n, coo, false);
    CHECK(a.rowptr == ref.rowptr);
    CHECK(a.col == ref.col);
    CHECK(a.val == ref.val);
    REQUIRE(a.col.capacity() >= a.col.size() + n);  // room for the diagonal
    REQUIRE(a.val.capacity() >= a.val.size() + n);

    // Â in A's storage (no copy) equals the copying path, which the test above checks against the formula
    Dataset d;
    d.adj = a;
    d.directed = !symmetrize;
    const NormalizedAdjacency copied = normalized_graph(d);
    HostCsr built = build();  // the loaders' output as it is, handed over
    const std::int64_t* storage = built.col.data();
    const NormalizedAdjacency in_place = normalized_graph(std::move(built), !symmetrize);
    CHECK(in_place.a_hat->col.data() == storage);
    CHECK(*in_place.a_hat == *copied.a_hat);
    CHECK(*in_place.a_hat_t == *copied.a_hat_t);
    CHECK(in_place.a_hat->nnz() == a.nnz() + n);

    // unordered pairs, counted without a transposed copy, against a set of pairs
    std::set<std::pair<std::int64_t, std::int64_t>> pairs;
    for (std::int64_t u = 0; u < n; ++u)
      for (std::int64_t k = a.rowptr[u]; k < a.rowptr[u + 1]; ++k) pairs.insert(std::minmax(u, a.col[k]));
    d.labels.assign(n, 0), d.split.assign(n, 0);
    CHECK(dataset_info(d).edges_undirected == static_cast<std::int64_t>(pairs.size()));
  }
  // a source that gives other edges on its second pass (a file changed under
  // us) is an error, not a corrupt CSR or a write past a row
  for (const std::int64_t second : {1, 3}) {
    int pass = 0;
    CHECK_THROWS_WITH(csr_from_edge_passes(
                          4,
                          [&](const EdgeEmit& emit) {
                            emit(0, 2);
                            const std::int64_t row_1 = pass++ == 0 ? 2 : second;
                            for (std::int64_t k = 0; k < row_1; ++k) emit(1, k == 0 ? 0 : 3);
                          },
                          false),
                      Catch::Contains("different edges on its second pass"));
  }
}

namespace {

std::string write_gz(const std::string& name, const std::string& text) {
  const fs::path p = temp_dir() / name;
  fs::create_directories(p.parent_path());
  gzFile f = gzopen(p.c_str(), "wb");
  REQUIRE(f != nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  return p.string();
}

// A 5-vertex OGB directory in OGB's raw layout: a directed path 0->1->2->3->4
// plus 4->0, 3 features, 2 classes, vertex 4 unlabeled ("nan") and in no split.
std::string write_ogb(const std::string& name, const std::string& edges = "0,1\n1,2\n2,3\n3,4\n4,0\n") {
  write_gz(name + "/raw/edge.csv.gz", edges);
  write_gz(name + "/raw/node-feat.csv.gz", "0.5,1,-1\n1,2,3\n0,0,0\n-0.25,1e-3,2\n1,1,1\n");
  write_gz(name + "/raw/node-label.csv.gz", "0\n1\n1\n0\nnan\n");
  write_gz(name + "/raw/num-node-list.csv.gz", "5\n");
  write_gz(name + "/split/time/train.csv.gz", "0\n1\n");
  write_gz(name + "/split/time/valid.csv.gz", "2\n");
  write_gz(name + "/split/time/test.csv.gz", "3\n");
  return (temp_dir() / name).string();
}

}  // namespace

TEST_CASE("edges: SNAP edge lists, plain and gzip, 0- and 1-based, directed or symmetrised", "[data][edges]") {
  const std::string text = "# Directed graph: toy\n# FromNodeId\tToNodeId\n0\t1\n1 2\n2,0\n2\t2\n\n0\t1\n";
  const auto plain = write_file("toy.txt", text);
  const Dataset u = load_dataset("edges:" + plain + ",features=4,classes=2");
  CHECK(u.name == "toy");
  CHECK(u.nodes() == 3);
  CHECK_FALSE(u.directed);
  // symmetrised, self-loop and duplicate dropped: {0,1}, {1,2}, {0,2} both ways
  CHECK(edges_of(u.adj) == std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}});
  const Dataset d = load_dataset("edges:" + write_gz("toy.txt.gz", text) + ",directed=1,nodes=4");
  CHECK(d.directed);
  CHECK(d.nodes() == 4);
  CHECK(edges_of(d.adj) == std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}, {1, 2}, {2, 0}});
  const Dataset one = load_dataset("edges:" + write_file("one.txt", "1 2\n2 3\n") + ",base=1");
  CHECK(one.nodes() == 3);
  CHECK(edges_of(one.adj) == std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}, {1, 0}, {1, 2}, {2, 1}});
}

TEST_CASE("text read in parts: byte ranges that tile a file, and a stream's line ranges, read every line once",
          "[data][ranges]") {
  // CRLF, blank lines, a last line without its newline
  const std::string text = "%%MatrixMarket matrix coordinate real general\n% c\n4 4 5\n1 2 0.5\r\n\n2 3 1\n"
                           "% mid\n3 1 2\n4 4 1\n3 4 7";
  const std::string plain = write_file("parts.mtx", text), gz = write_gz("parts.mtx.gz", text);
  std::vector<std::string> lines;
  for_lines_in_bytes(plain, 0, static_cast<std::int64_t>(text.size()),
                     [&](const std::string& line, std::int64_t) { lines.push_back(line); });
  REQUIRE(lines.size() == 10);
  CHECK(lines[3] == "1 2 0.5");
  CHECK(lines[9] == "3 4 7");
  const auto size = static_cast<std::int64_t>(text.size());
  for (std::int64_t c1 = 0; c1 <= size; ++c1)
    for (std::int64_t c2 = c1; c2 <= size; c2 += 7) {  // three ranges cut anywhere, empty ones too
      std::vector<std::string> parts;
      for (auto [b0, b1] : {std::pair{std::int64_t{0}, c1}, {c1, c2}, {c2, size}})
        for_lines_in_bytes(plain, b0, b1, [&](const std::string& line, std::int64_t at) {
          CHECK((at >= b0 && at < b1));
          parts.push_back(line);
        });
      INFO("cut at " << c1 << " and " << c2);
      REQUIRE(parts == lines);
    }
  LineStream stream(gz);
  std::vector<std::string> streamed;
  auto keep = [&](const std::string& line, std::int64_t) { streamed.push_back(line); };
  for (auto [k0, k1] : {std::pair{0, 4}, {4, 5}, {5, 100}}) stream.read(k0, k1, keep);
  CHECK(streamed == lines);
  streamed.clear();
  stream.read(2, 4, keep);  // an earlier line: the stream starts over
  CHECK(streamed == std::vector<std::string>(lines.begin() + 2, lines.begin() + 4));
  CHECK(LineStream::count(gz) == 10);

  // Matrix Market's draws: ranges that tile its draws (bytes after the size line; lines of the gzip file) emit
  // the entries read_matrix_market reads, the diagonal included; the total is checked against the size line.
  using E = std::vector<std::pair<std::int64_t, std::int64_t>>;
  const E entries{{0, 1}, {1, 2}, {2, 0}, {3, 3}, {2, 3}};
  for (const std::string& path : {plain, gz}) {
    const EdgeDraws g = matrix_market_draws(parse_dataset_spec("mtx:" + path));
    CHECK(g.n == 4);
    CHECK(g.directed);
    CHECK(g.undirected_if_symmetric);
    CHECK(g.stream.empty() == (path == plain));
    const std::int64_t draws = g.stream.empty() ? g.draws : LineStream::count(path);
    for (std::int64_t cut = 0; cut <= draws; ++cut) {
      E read;
      for (auto [k0, k1] : {std::pair{std::int64_t{0}, cut}, {cut, draws}})
        g.draw(k0, k1, [&](std::int64_t u, std::int64_t v) { read.emplace_back(u, v); });
      REQUIRE(read == entries);
    }
    CHECK_NOTHROW(g.check_edges(5));
    CHECK_THROWS_WITH(g.check_edges(4), Catch::Contains("5 entries declared but 4 found"));
  }
}

TEST_CASE("edges: malformed lines and ids out of range name the line", "[data][edges][errors]") {
  CHECK_THROWS_WITH(load_dataset("edges:" + write_file("bad1.txt", "0 1\n1 x\n")),
                    Catch::Contains("line 2") && Catch::Contains("malformed edge '1 x'"));
  CHECK_THROWS_WITH(load_dataset("edges:" + write_file("bad2.txt", "0 1\n1 5\n") + ",nodes=4"),
                    Catch::Contains("line 2") && Catch::Contains("vertex id 5 is out of range"));
  CHECK_THROWS_WITH(load_dataset("edges:" + write_file("bad3.txt", "1 2\n0 1\n") + ",base=1"),
                    Catch::Contains("line 2") && Catch::Contains("below the first id 1"));
  CHECK_THROWS_WITH(load_dataset("edges:" + (temp_dir() / "absent.txt").string()), Catch::Contains("cannot open"));
}

TEST_CASE("ogb: OGB's raw layout (csv.gz), features, labels with nan, the split", "[data][ogb]") {
  const Dataset d = load_dataset("ogb:" + write_ogb("ogbn_toy"));
  CHECK(d.name == "ogbn_toy");
  CHECK(d.nodes() == 5);
  CHECK(d.features == 3);
  CHECK(d.classes == 2);
  CHECK_FALSE(d.directed);
  CHECK(d.adj.nnz() == 10);  // 5 edges, both ways
  CHECK(d.x[3 * 3 + 1] == Approx(1e-3));
  CHECK(d.labels == std::vector<std::int32_t>{0, 1, 1, 0, -1});
  CHECK(d.count(ew::kTrain) == 2);
  CHECK(d.count(ew::kVal) == 1);
  CHECK(d.count(ew::kTest) == 1);
  const Dataset directed = load_dataset("ogb:" + write_ogb("ogbn_toy") + ",directed=1,split=time");
  CHECK(directed.directed);
  CHECK(directed.adj.nnz() == 5);
}

TEST_CASE("ogb: a missing file, a malformed CSV line, an edge out of range", "[data][ogb][errors]") {
  const std::string dir = write_ogb("ogbn_missing");
  fs::remove(dir + "/raw/node-label.csv.gz");
  CHECK_THROWS_WITH(load_dataset("ogb:" + dir), Catch::Contains("node-label.csv.gz' is missing"));
  const std::string bad = write_ogb("ogbn_bad", "0,1\n1;2\n");
  CHECK_THROWS_WITH(load_dataset("ogb:" + bad), Catch::Contains("edge.csv.gz' line 2") && Catch::Contains("malformed edge"));
  const std::string range = write_ogb("ogbn_range", "0,1\n1,7\n");
  CHECK_THROWS_WITH(load_dataset("ogb:" + range), Catch::Contains("line 2") && Catch::Contains("vertex id 7 is out of range"));
  write_gz("ogbn_feat/raw/node-feat.csv.gz", "1,2,3\n1,oops,3\n");
  write_ogb("ogbn_feat2");
  fs::copy_file(temp_dir() / "ogbn_feat/raw/node-feat.csv.gz", temp_dir() / "ogbn_feat2/raw/node-feat.csv.gz",
                fs::copy_options::overwrite_existing);
  CHECK_THROWS_WITH(load_dataset("ogb:" + (temp_dir() / "ogbn_feat2").string()),
                    Catch::Contains("node-feat.csv.gz' line 2") && Catch::Contains("column 2"));
  // a label an int32 class number cannot hold: refused, not wrapped (2^32 read as class 0) or overflowed (+ 1)
  for (const std::string label : {"2147483647", "4294967296", "9223372036854775807"}) {
    const std::string dir = write_ogb("ogbn_label_" + label);
    write_gz("ogbn_label_" + label + "/raw/node-label.csv.gz", "0\n1\n" + label + "\n0\nnan\n");
    CHECK_THROWS_WITH(load_dataset("ogb:" + dir), Catch::Contains("label " + label + " of vertex 2 is out of range"));
  }
  const std::string top = write_ogb("ogbn_label_top");
  write_gz("ogbn_label_top/raw/node-label.csv.gz", "0\n1\n2147483646\n0\nnan\n");
  CHECK(load_dataset("ogb:" + top).classes == 2147483647);
}

namespace {

// Runs a Python script with Debian's numpy (scripts/setup.sh installs it):
// the .npz fixtures below are written by numpy itself, so the reader is
// checked against the writer its users have, not against one of ours.
void numpy(const std::string& script) {
  const std::string path = write_file("fixture.py", script);
  REQUIRE(std::system(("/usr/bin/python3 " + path + " " + temp_dir().string()).c_str()) == 0);
}

// The toy OGB graph of write_ogb as NumPy archives: reddit_data.npz and
// reddit_graph.npz (scipy.sparse.save_npz's layout, csr and coo), and OGB's
// npz form (edge_index Fortran-ordered, float16 features, float64 labels with nan).
const char* kNpzFixtures = R"(
import gzip, os, sys
import numpy as np
d = sys.argv[1]
x = np.array([[0.5, 1, -1], [1, 2, 3], [0, 0, 0], [-0.25, 0.5, 2], [1, 1, 1]], dtype=np.float32)
src, dst = np.array([0, 1, 2, 3, 4]), np.array([1, 2, 3, 4, 0])
for name, fmt in (("reddit_csr", "csr"), ("reddit_coo", "coo")):
    os.makedirs(f"{d}/{name}", exist_ok=True)
    np.savez_compressed(f"{d}/{name}/reddit_data.npz", feature=x, label=np.array([0, 1, 1, 0, 1]),
                        node_types=np.array([1, 1, 2, 3, 0], dtype=np.int32))
    if fmt == "csr":
        order = np.lexsort((dst, src))
        indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=5))])
        np.savez_compressed(f"{d}/{name}/reddit_graph.npz", indices=dst[order].astype(np.int32),
                            indptr=indptr.astype(np.int32), format=np.array(b"csr"), shape=np.array([5, 5]),
                            data=np.ones(5, dtype=np.float32))
    else:  # stored, not deflated
        np.savez(f"{d}/{name}/reddit_graph.npz", row=src.astype(np.int32), col=dst.astype(np.int32),
                 format=np.array(b"coo"), shape=np.array([5, 5]), data=np.ones(5, dtype=np.float32))
o = f"{d}/ogbn_npz"
os.makedirs(f"{o}/raw", exist_ok=True)
os.makedirs(f"{o}/split/time", exist_ok=True)
np.savez_compressed(f"{o}/raw/data.npz", edge_index=np.asfortranarray(np.stack([src, dst])),
                    node_feat=x.astype(np.float16), num_nodes_list=np.array([5]), node_year=np.zeros((5, 1)))
np.savez_compressed(f"{o}/raw/node-label.npz", node_label=np.array([[0], [1], [1], [0], [np.nan]]))
for split, ids in (("train", "0\n1\n"), ("valid", "2\n"), ("test", "3\n")):
    with gzip.open(f"{o}/split/time/{split}.csv.gz", "wt") as f:
        f.write(ids)
)";

}  // namespace

TEST_CASE("reddit and OGB's npz form: numpy's archives read as the same graph as the csv form", "[data][npz]") {
  numpy(kNpzFixtures);
  const Dataset csv = load_dataset("ogb:" + write_ogb("ogbn_csv"));
  for (const char* name : {"reddit_csr", "reddit_coo"}) {
    INFO(name);
    const Dataset r = load_dataset("reddit:" + (temp_dir() / name).string());
    CHECK(r.name == "reddit");
    CHECK(r.nodes() == 5);
    CHECK(r.features == 3);
    CHECK(r.classes == 2);
    CHECK(edges_of(r.adj) == edges_of(csv.adj));  // symmetrised
    CHECK(r.x[3 * 3 + 0] == -0.25f);
    CHECK(r.labels == std::vector<std::int32_t>{0, 1, 1, 0, 1});
    CHECK(r.split == std::vector<std::uint8_t>{ew::kTrain, ew::kTrain, ew::kVal, ew::kTest, ew::kNone});
  }
  const Dataset directed = load_dataset("reddit:" + (temp_dir() / "reddit_csr").string() + ",directed=1");
  CHECK(edges_of(directed.adj) == std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}});

  const Dataset o = load_dataset("ogb:" + (temp_dir() / "ogbn_npz").string());
  CHECK(o.name == "ogbn_npz");
  CHECK(edges_of(o.adj) == edges_of(csv.adj));
  CHECK(o.labels == csv.labels);  // nan: unlabeled
  CHECK(o.split == csv.split);
  CHECK(o.x[3 * 3 + 1] == 0.5f);  // exact in float16
  CHECK(o.x[3 * 3 + 0] == -0.25f);
  CHECK(dataset_fingerprint(o) == dataset_fingerprint(load_dataset("ogb:" + (temp_dir() / "ogbn_npz").string())));
}

TEST_CASE("OGB's npz form: a label an int32 class number cannot hold is refused", "[data][npz][errors]") {
  numpy(kNpzFixtures);
  numpy(R"(
import shutil, sys
import numpy as np
d = sys.argv[1]
for name, label in (("ogbn_npz_big", 2.0 ** 31), ("ogbn_npz_huge", 1e300)):
    shutil.rmtree(f"{d}/{name}", ignore_errors=True)
    shutil.copytree(f"{d}/ogbn_npz", f"{d}/{name}")
    np.savez_compressed(f"{d}/{name}/raw/node-label.npz", node_label=np.array([[0], [1], [label], [0], [np.nan]]))
)");
  CHECK_THROWS_WITH(load_dataset("ogb:" + (temp_dir() / "ogbn_npz_big").string()),
                    Catch::Contains("label 2147483648 of vertex 2 is out of range"));
  CHECK_THROWS_WITH(load_dataset("ogb:" + (temp_dir() / "ogbn_npz_huge").string()),
                    Catch::Contains("of vertex 2 is out of range"));
}

TEST_CASE("npz: a member read in parts, from any element, stored or deflated, as read whole", "[data][npz]") {
  numpy(kNpzFixtures);  // reddit_coo's graph is stored, reddit_csr's and OGB's deflated
  for (const auto& [archive, member] : {std::pair{"reddit_coo/reddit_graph.npz", "row"},
                                        {"reddit_csr/reddit_data.npz", "feature"},
                                        {"ogbn_npz/raw/data.npz", "node_feat"}}) {
    INFO(archive << " " << member);
    const NpzArchive a((temp_dir() / archive).string());
    const std::vector<double> whole = a.read<double>(member);
    NpyCursor c(a, member);
    CHECK(c.stored() == (std::string(archive) == "reddit_coo/reddit_graph.npz"));
    const auto count = static_cast<std::int64_t>(whole.size());
    CHECK(c.header().count() == count);
    for (const std::int64_t k : {std::int64_t{0}, count / 2, std::int64_t{1}, count - 1, std::int64_t{0}}) {
      std::vector<double> part(static_cast<std::size_t>(count - k));  // forwards, then back to an earlier element
      c.read<double>(k, part);
      CHECK(part == std::vector<double>(whole.begin() + k, whole.end()));
    }
  }
  // Fortran order: the file's order (the transpose of read's)
  const NpzArchive o((temp_dir() / "ogbn_npz/raw/data.npz").string());
  NpyCursor e(o, "edge_index");
  CHECK(e.header().fortran);
  std::vector<std::int64_t> pairs(10);
  e.read<std::int64_t>(0, pairs);
  CHECK(pairs == std::vector<std::int64_t>{0, 1, 1, 2, 2, 3, 3, 4, 4, 0});
}

TEST_CASE("npz: truncated, damaged and incomplete archives are one clear error", "[data][npz][errors]") {
  numpy(kNpzFixtures);
  const fs::path dir = temp_dir() / "reddit_csr", data = dir / "reddit_data.npz";
  const std::string spec = "reddit:" + dir.string();
  std::string bytes;
  {
    std::ifstream in(data, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& b) { std::ofstream(data, std::ios::binary) << b; };
  write(bytes.substr(0, bytes.size() / 2));
  CHECK_THROWS_WITH(load_dataset(spec), Catch::Contains("reddit_data.npz") && Catch::Contains("not a zip archive"));
  std::string damaged = bytes;
  auto u16 = [&](std::size_t at) { return static_cast<unsigned char>(bytes[at]) | static_cast<unsigned char>(bytes[at + 1]) << 8; };
  damaged[30 + u16(26) + u16(28) + 10] ^= 0x20;  // inside the first member's deflate stream
  write(damaged);
  CHECK_THROWS_WITH(load_dataset(spec), Catch::Contains("reddit_data.npz' member") &&
                                            (Catch::Contains("damaged") || Catch::Contains("truncated") ||
                                             Catch::Contains("inflates to")));
  write(bytes);
  fs::remove(dir / "reddit_graph.npz");
  CHECK_THROWS_WITH(load_dataset(spec), Catch::Contains("reddit_graph.npz' is missing"));
  numpy(kNpzFixtures);
  numpy(R"(
import sys, numpy as np
np.savez(sys.argv[1] + "/reddit_csr/reddit_data.npz", feature=np.zeros((5, 3), dtype=np.float32), label=np.zeros(5))
)");
  CHECK_THROWS_WITH(load_dataset(spec), Catch::Contains("has no array 'node_types' (it holds: feature, label)"));
  numpy(R"(
import sys, numpy as np
np.savez(sys.argv[1] + "/reddit_csr/reddit_data.npz", feature=np.zeros((5, 3), dtype=">f4"), label=np.zeros(5),
         node_types=np.ones(5))
)");
  CHECK_THROWS_WITH(load_dataset(spec), Catch::Contains("big-endian dtype '>f4'"));
}

// Each input the fuzzers found (fuzz/regressions/<parser>/) is one clear error
// in this build too, with the message the fix gives.
TEST_CASE("fuzz regressions: inputs that crashed a parser are clear errors", "[data][fuzz][errors]") {
  using test::error_message;
  const std::string dir = std::string(GCNLAB_SOURCE_DIR) + "/fuzz/regressions/";
  for (const char* f : {"huge-shape", "huge-header"})
    CHECK_THAT(error_message([&] { read_npy(dir + "npy/" + f); }), Catch::Contains("is truncated"));
  std::ifstream in(dir + "pickle/memo-index-4g", std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  CHECK_THAT(error_message([&] { pickle::load(bytes, "memo"); }), Catch::Contains("pickle 'memo'"));  // once a 4 GB memo table
  {  // a list appended to itself through the memo: a cycle (shared ownership once leaked it; ASan build)
    std::ifstream cycle(dir + "pickle/list-appended-to-itself", std::ios::binary);
    const pickle::Document doc =
        pickle::load({std::istreambuf_iterator<char>(cycle), std::istreambuf_iterator<char>()}, "cycle");
    REQUIRE(doc.root()->kind == pickle::Object::Kind::list);
    REQUIRE(doc.root()->items.size() == 1);
    CHECK(doc.root()->items[0] == doc.root());
  }
  CHECK_THAT(error_message([&] { load_dataset("edges:" + dir + "edges/sparse-ids"); }),
             Catch::Contains("implies 100000000000000 vertices for 2 edges"));
  // a member whose .npy header fails while it inflates (the inflater once leaked)
  const NpzArchive npz(dir + "npz/error-inside-inflate");
  std::string messages;
  for (const std::string& name : npz.names()) messages += error_message([&] { npz.read<double>(name); }) + "\n";
  CHECK_THAT(messages, Catch::Contains("npz/error-inside-inflate' member"));
  // Numbers out of their field's range in JSON we read (common/core/json.hpp): once undefined
  // behaviour (2.56e67 as an int64, 1e40 as an int) or silently another value (2^32 + 1 shards read as 1).
  auto manifest = [&](const std::string& file) {
    const fs::path d = temp_dir() / ("manifest-" + file);
    fs::create_directories(d);
    fs::copy_file(dir + "shards/" + file, d / "meta.json", fs::copy_options::overwrite_existing);
    return error_message([&] { read_shard_meta(d.string()); });
  };
  CHECK_THAT(manifest("nodes-float-out-of-range.json"), Catch::Contains("expected an integer in") &&
                                                            Catch::Contains("got 2.56e+67"));
  CHECK_THAT(manifest("shards-wider-than-int.json"), Catch::Contains("got 4294967297"));
  CHECK_THAT(manifest("versions-float.json"), Catch::Contains("got 0.5"));
  CHECK_THAT(manifest("class-signal-beyond-float.json"), Catch::Contains("a number of magnitude at most"));
  CHECK_THAT(manifest("nodes-overflow-8n.json"), Catch::Contains("4611686018427387904 vertices"));
  CHECK_THAT(error_message([&] { read_gcl(dir + "gcl/nodes-float-out-of-range.gcl"); }),
             Catch::Contains("malformed header") && Catch::Contains("got 2.56e+67"));
  CHECK_THAT(error_message([&] { read_gcl(dir + "gcl/nodes-int64-max.gcl"); }),
             Catch::Contains("9223372036854775807 vertices"));
  CHECK_THAT(error_message([&] { read_gcl(dir + "gcl/features-overflow.gcl"); }),
             Catch::Contains("2305843009213693952 features"));
}

// planetoid:DIR/NAME[,row-normalize=1] — the original Planetoid files
// ind.NAME.{x,tx,allx,y,ty,ally,graph,test.index} (Yang et al. 2016), read
// directly, assembled exactly as Kipf & Welling's utils.load_data does:
//   vertices 0..|allx|-1 take the rows of allx/ally; vertex test.index[k]
//   takes row k of tx/ty; vertices in the test id range that are missing from
//   test.index (CiteSeer's isolated nodes) get zero features and no label;
//   train = range(|y|), val = range(|y|, |y|+500), test = test.index.
// Features are row-normalised unless row-normalize=0. Self-loops in the graph
// are dropped (the normalisation adds I once).

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/data/dataset.hpp"
#include "common/data/pickle.hpp"
#include "common/data/spec_args.hpp"

namespace gcnlab {

namespace {

using pickle::Object;
using K = Object::Kind;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  GCNLAB_CHECK(in.good(), "cannot open Planetoid file '{}'", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct SparseRows {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> indptr, indices;
  std::vector<float> data;
};

SparseRows read_csr(const std::string& path) {
  const pickle::Document doc = pickle::load(slurp(path), path);
  const Object& m = pickle::expect(doc.root(), K::instance, path);
  const auto& shape = pickle::expect(pickle::lookup(m, "_shape", path), K::tuple, path).items;
  GCNLAB_CHECK(shape.size() == 2, "{}: matrix shape is not 2D", path);
  SparseRows s;
  s.rows = pickle::expect(shape[0], K::integer, path).integer;
  s.cols = pickle::expect(shape[1], K::integer, path).integer;
  const auto indptr = pickle::as_array(pickle::lookup(m, "indptr", path), path + " indptr");
  const auto indices = pickle::as_array(pickle::lookup(m, "indices", path), path + " indices");
  const auto data = pickle::as_array(pickle::lookup(m, "data", path), path + " data");
  GCNLAB_CHECK(indptr.size() == s.rows + 1 && indices.size() == data.size(),
               "{}: inconsistent CSR arrays", path);
  for (std::int64_t k = 0; k < indptr.size(); ++k) s.indptr.push_back(static_cast<std::int64_t>(indptr.at(k)));
  GCNLAB_CHECK(s.indptr.front() == 0 && s.indptr.back() == indices.size(), "{}: inconsistent CSR row pointers", path);
  for (std::int64_t k = 0; k < indices.size(); ++k) {
    s.indices.push_back(static_cast<std::int64_t>(indices.at(k)));
    GCNLAB_CHECK(s.indices.back() >= 0 && s.indices.back() < s.cols, "{}: column index out of range", path);
    s.data.push_back(static_cast<float>(data.at(k)));
  }
  for (std::int64_t i = 0; i < s.rows; ++i)
    GCNLAB_CHECK(s.indptr[i] <= s.indptr[i + 1], "{}: decreasing CSR row pointers", path);
  return s;
}

// One-hot label matrix -> class per row (-1 for an all-zero row).
std::vector<std::int32_t> read_onehot(const std::string& path, std::int64_t& classes) {
  const auto a = pickle::as_array(pickle::load(slurp(path), path).root(), path);
  GCNLAB_CHECK(a.shape.size() == 2, "{}: label matrix is not 2D", path);
  classes = a.shape[1];
  std::vector<std::int32_t> y(a.shape[0], -1);
  for (std::int64_t i = 0; i < a.shape[0]; ++i) {
    double best = 0;
    for (std::int64_t c = 0; c < classes; ++c) {
      const double v = a.at(i * classes + c);
      if (v > best) best = v, y[i] = static_cast<std::int32_t>(c);
    }
  }
  return y;
}

}  // namespace

Dataset read_planetoid(const DatasetSpec& spec) {
  const SpecArgs args(spec, {"row-normalize"});
  const std::string base = args.str("path");
  const auto slash = base.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : base.substr(0, slash);
  const std::string name = base.substr(slash == std::string::npos ? 0 : slash + 1);
  auto file = [&](const std::string& ext) { return dir + "/ind." + name + "." + ext; };

  const SparseRows tx = read_csr(file("tx")), allx = read_csr(file("allx"));
  const SparseRows x = read_csr(file("x"));
  std::int64_t ny = 0, nty = 0, nally = 0;
  const auto y = read_onehot(file("y"), ny);
  const auto ty = read_onehot(file("ty"), nty);
  const auto ally = read_onehot(file("ally"), nally);
  GCNLAB_CHECK(ny == nty && ny == nally, "{}: label files disagree on the number of classes", base);
  GCNLAB_CHECK(tx.cols == allx.cols && x.cols == allx.cols, "{}: feature files disagree on the width", base);
  GCNLAB_CHECK(static_cast<std::int64_t>(ty.size()) == tx.rows && static_cast<std::int64_t>(ally.size()) == allx.rows,
               "{}: feature and label files disagree on the number of rows", base);

  std::vector<std::int64_t> test_index;
  {
    std::ifstream in(file("test.index"));
    GCNLAB_CHECK(in.good(), "cannot open Planetoid file '{}'", file("test.index"));
    std::string line;
    long lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (line.empty()) continue;
      try {
        std::size_t used = 0;
        test_index.push_back(std::stoll(line, &used));
        GCNLAB_CHECK(used == line.size(), "");
      } catch (const std::exception&) {
        fail("'{}' line {}: '{}' is not a vertex id", file("test.index"), lineno, line);
      }
    }
  }
  GCNLAB_CHECK(static_cast<std::int64_t>(test_index.size()) == tx.rows,
               "{}: test.index has {} ids but tx has {} rows", base, test_index.size(), tx.rows);
  const auto [lo, hi] = std::minmax_element(test_index.begin(), test_index.end());
  const std::int64_t n = std::max(allx.rows, *hi + 1);
  GCNLAB_CHECK(*lo >= allx.rows, "{}: test ids overlap the allx rows", base);

  Dataset d;
  d.name = name;
  d.features = allx.cols;
  d.classes = static_cast<int>(ny);
  d.x.assign(n * d.features, 0.f);
  d.labels.assign(n, -1);
  d.split.assign(n, ew::kNone);
  auto put = [&](const SparseRows& m, std::int64_t row, std::int64_t v) {
    for (std::int64_t k = m.indptr[row]; k < m.indptr[row + 1]; ++k) d.x[v * d.features + m.indices[k]] = m.data[k];
  };
  for (std::int64_t i = 0; i < allx.rows; ++i) put(allx, i, i), d.labels[i] = ally[i];
  for (std::int64_t k = 0; k < tx.rows; ++k) put(tx, k, test_index[k]), d.labels[test_index[k]] = ty[k];

  const std::int64_t ntrain = x.rows;
  GCNLAB_CHECK(ntrain + 500 <= allx.rows, "{}: too few allx rows for the standard split", base);
  for (std::int64_t v = 0; v < ntrain; ++v) d.split[v] = ew::kTrain;
  for (std::int64_t v = ntrain; v < ntrain + 500; ++v) d.split[v] = ew::kVal;
  for (std::int64_t v : test_index) d.split[v] = ew::kTest;

  // graph: defaultdict(list) {vertex: [neighbours]} -> undirected adjacency
  const pickle::Document doc = pickle::load(slurp(file("graph")), file("graph"));
  const pickle::Ref g = doc.root();
  GCNLAB_CHECK(g->kind == K::instance || g->kind == K::dict, "{}: graph is not a dict", file("graph"));
  std::vector<Coo> edges;
  std::int64_t nodes = n;
  for (const auto& [key, value] : g->entries) {
    const std::int64_t u = pickle::expect(key, K::integer, file("graph")).integer;
    for (const auto& nb : pickle::expect(value, K::list, file("graph")).items) {
      const std::int64_t v = pickle::expect(nb, K::integer, file("graph")).integer;
      GCNLAB_CHECK(u >= 0 && v >= 0, "{}: negative vertex id", file("graph"));
      nodes = std::max({nodes, u + 1, v + 1});
      if (u == v) continue;
      edges.push_back({u, v, 1.f});
      edges.push_back({v, u, 1.f});
    }
  }
  GCNLAB_CHECK(nodes == n, "{}: graph has {} vertices but the feature files describe {}", base, nodes, n);
  d.adj = csr_from_coo(n, n, std::move(edges), /*sum_duplicates=*/false);
  d.directed = false;
  if (args.integer("row-normalize", 1) != 0) row_normalize_features(d);
  return d;
}

}  // namespace gcnlab

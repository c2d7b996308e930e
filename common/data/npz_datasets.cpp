// Datasets shipped as NumPy .npz archives (common/data/npz.hpp):
//   reddit:DIR  the Reddit release of GraphSAGE / DGL / PyG: reddit_data.npz
//               (feature N x F, label N, node_types N: 1 train, 2 val, 3 test)
//               and reddit_graph.npz (a scipy.sparse.save_npz matrix: csr,
//               csc or coo), symmetrised unless directed=1;
//   ogb:DIR     OGB's .npz form (ogbn-papers100M): raw/data.npz (edge_index
//               2 x E, node_feat N x F, float16 or float32) and
//               raw/node-label.npz (node_label, nan = unlabeled); the split
//               stays split/NAME/*.csv.gz (read_ogb).

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>

#include "common/core/atomic_file.hpp"
#include "common/data/dataset.hpp"
#include "common/data/npz.hpp"
#include "common/data/spec_args.hpp"

namespace gcnlab {

namespace {

namespace fs = std::filesystem;

std::string npz_path(const std::string& dir, const std::string& file, const char* kind) {
  const std::string path = (fs::path(dir) / file).string();
  GCNLAB_CHECK(fs::exists(path), "{}: '{}' is missing", kind, path);
  return path;
}

// Shape [rows, cols] of a member (a vector counts as rows x 1).
std::array<std::int64_t, 2> matrix_shape(const NpzArchive& a, const std::string& name) {
  const NpyHeader h = a.header(name);
  GCNLAB_CHECK(h.shape.size() == 1 || h.shape.size() == 2, "'{}' member '{}' has shape of {} dimensions, expected 1 or 2",
               a.path(), name, h.shape.size());
  return {h.shape[0], h.shape.size() == 2 ? h.shape[1] : 1};
}

void read_features(const NpzArchive& a, const std::string& name, Dataset& d) {
  const std::int64_t f = matrix_shape(a, name)[1];
  d.features = f;
  d.x = a.read<float>(name);
  for (std::size_t k = 0; k < d.x.size(); ++k)
    GCNLAB_CHECK(std::isfinite(d.x[k]), "'{}' member '{}': feature ({}, {}) is not finite", a.path(), name,
                 k / static_cast<std::size_t>(f), k % static_cast<std::size_t>(f));
}

// Labels from numbers (nan or negative: unlabeled, -1); classes from the largest.
void set_labels(Dataset& d, std::int64_t n, const std::vector<double>& y, const std::string& where) {
  GCNLAB_CHECK(static_cast<std::int64_t>(y.size()) == n, "{}: {} labels for {} vertices", where, y.size(), n);
  d.labels.resize(y.size());
  int classes = 0;
  for (std::size_t v = 0; v < y.size(); ++v) {
    const bool none = std::isnan(y[v]) || y[v] < 0;
    GCNLAB_CHECK(none || y[v] == std::floor(y[v]), "{}: label {} of vertex {} is not an integer", where, y[v], v);
    GCNLAB_CHECK(none || y[v] < static_cast<double>(kLabelLimit),
                 "{}: label {} of vertex {} is out of range (class numbers are below {})", where, y[v], v, kLabelLimit);
    d.labels[v] = none ? -1 : static_cast<std::int32_t>(y[v]);
    classes = std::max(classes, d.labels[v] + 1);
  }
  d.classes = classes;
}

// Vertex ids of edges, checked against n.
void check_ids(std::span<const std::int64_t> ids, std::int64_t n, const std::string& where) {
  for (std::size_t k = 0; k < ids.size(); ++k)
    GCNLAB_CHECK(ids[k] >= 0 && ids[k] < n, "{}: edge {} names vertex {}, out of range [0, {})", where, k, ids[k], n);
}

// The adjacency of the edges src[k] -> dst[k] (symmetrised unless directed).
HostCsr adjacency(std::int64_t n, std::span<const std::int64_t> src, std::span<const std::int64_t> dst, bool directed,
                  const std::string& where) {
  GCNLAB_CHECK(src.size() == dst.size(), "{}: {} sources and {} targets", where, src.size(), dst.size());
  check_ids(src, n, where);
  check_ids(dst, n, where);
  return csr_from_edges(n, src, dst, !directed);
}

// A scipy.sparse.save_npz matrix (row -> column) as the adjacency of n vertices.
HostCsr sparse_adjacency(const NpzArchive& g, std::int64_t n, bool directed) {
  const std::string format = g.read_bytes("format");
  const std::vector<std::int64_t> shape = g.read<std::int64_t>("shape");
  GCNLAB_CHECK(shape.size() == 2 && shape[0] == n && shape[1] == n, "'{}': the graph is {} x {}, the features have {} rows",
               g.path(), shape.size() == 2 ? shape[0] : 0, shape.size() == 2 ? shape[1] : 0, n);
  if (format == "coo")
    return adjacency(n, g.read<std::int64_t>("row"), g.read<std::int64_t>("col"), directed, g.path());
  GCNLAB_CHECK(format == "csr" || format == "csc", "'{}': sparse format '{}' is not supported (csr, csc or coo)",
               g.path(), format);
  const auto ptr = g.read<std::int64_t>("indptr");
  const auto idx = g.read<std::int64_t>("indices");
  GCNLAB_CHECK(static_cast<std::int64_t>(ptr.size()) == n + 1 && ptr.front() == 0 &&
                   ptr.back() == static_cast<std::int64_t>(idx.size()) && std::is_sorted(ptr.begin(), ptr.end()),
               "'{}': indptr does not describe {} rows of {} indices", g.path(), n, idx.size());
  std::vector<std::int64_t> outer(idx.size());
  for (std::int64_t r = 0; r < n; ++r) std::fill(outer.begin() + ptr[r], outer.begin() + ptr[r + 1], r);
  return format == "csr" ? adjacency(n, outer, idx, directed, g.path()) : adjacency(n, idx, outer, directed, g.path());
}

// OGB's npz form: num_nodes_list, when present, against the n of node_feat.
void check_num_nodes(const NpzArchive& data, std::int64_t n) {
  if (!data.has("num_nodes_list")) return;
  const auto counts = data.read<std::int64_t>("num_nodes_list");
  GCNLAB_CHECK(counts.size() == 1 && counts[0] == n, "'{}': num_nodes_list says {} vertices, node_feat has {}",
               data.path(), counts.empty() ? 0 : counts[0], n);
}

// OGB's npz form: the labels of raw/node-label.npz (nan: unlabeled), and the classes.
void read_ogb_npz_labels(const std::string& dir, std::int64_t n, Dataset& d) {
  const NpzArchive labels(npz_path(dir, "raw/node-label.npz", "ogb"));
  set_labels(d, n, labels.read<double>("node_label"), fmt::format("'{}' member 'node_label'", labels.path()));
}

}  // namespace

Dataset read_reddit(const DatasetSpec& spec) {
  const SpecArgs a(spec, {"directed"});
  const std::string dir = a.str("path");
  GCNLAB_CHECK(fs::is_directory(dir), "reddit: '{}' is not a directory", dir);
  Dataset d;
  d.name = "reddit";
  d.directed = a.integer("directed", 0) != 0;
  const NpzArchive data(npz_path(dir, "reddit_data.npz", "reddit"));
  read_features(data, "feature", d);
  const std::int64_t n = static_cast<std::int64_t>(d.x.size()) / std::max<std::int64_t>(d.features, 1);
  set_labels(d, n, data.read<double>("label"), fmt::format("'{}' member 'label'", data.path()));
  const auto types = data.read<std::int64_t>("node_types");
  GCNLAB_CHECK(static_cast<std::int64_t>(types.size()) == n, "'{}': {} node types for {} vertices", data.path(),
               types.size(), n);
  d.split.resize(types.size());
  for (std::size_t v = 0; v < types.size(); ++v) {
    GCNLAB_CHECK(types[v] >= 0 && types[v] <= 3, "'{}': node type {} of vertex {} (expected 1 train, 2 val, 3 test)",
                 data.path(), types[v], v);
    d.split[v] = static_cast<std::uint8_t>(types[v]);  // the same codes as ew::Split
  }
  const NpzArchive graph(npz_path(dir, "reddit_graph.npz", "reddit"));
  d.adj = sparse_adjacency(graph, n, d.directed);
  return d;
}

bool read_ogb_npz(const std::string& dir, Dataset& d) {
  const fs::path raw = fs::path(dir) / "raw";
  if (!fs::exists(raw / "data.npz")) return false;
  const NpzArchive data((raw / "data.npz").string());
  read_features(data, "node_feat", d);
  const std::int64_t n = static_cast<std::int64_t>(d.x.size()) / std::max<std::int64_t>(d.features, 1);
  check_num_nodes(data, n);
  const auto [two, edges] = matrix_shape(data, "edge_index");
  GCNLAB_CHECK(two == 2, "'{}' member 'edge_index' is {} x {}, expected 2 x E", data.path(), two, edges);
  const std::vector<std::int64_t> ei = data.read<std::int64_t>("edge_index");  // sources, then targets
  const std::span<const std::int64_t> all(ei);
  d.adj = adjacency(n, all.first(edges), all.subspan(edges), d.directed, data.path() + " member 'edge_index'");
  read_ogb_npz_labels(dir, n, d);
  return true;
}

// OGB's npz form in parts. node_feat is read in blocks of rows, C order only
// (a Fortran-order matrix has no contiguous rows).
namespace {

// Rows [r0, r0 + count) of the C-order features, checked finite, handed to fn.
void for_feature_blocks(const NpzArchive& data, const std::function<void(std::span<const float>)>& fn) {
  NpyCursor x(data, "node_feat");
  const std::array<std::int64_t, 2> shape = matrix_shape(data, "node_feat");
  const std::int64_t rows = shape[0], f = shape[1];
  GCNLAB_CHECK(!x.header().fortran || x.header().shape.size() < 2,
               "{} member 'node_feat' is in Fortran order: prepare it in one process", data.path());
  const std::int64_t block = std::max<std::int64_t>(1, (std::int64_t{1} << 20) / std::max<std::int64_t>(f, 1));
  std::vector<float> buf;
  for (std::int64_t r0 = 0; r0 < rows; r0 += block) {
    buf.resize(static_cast<std::size_t>(std::min(block, rows - r0) * f));
    x.read<float>(r0 * f, buf);
    for (std::size_t k = 0; k < buf.size(); ++k)
      GCNLAB_CHECK(std::isfinite(buf[k]), "'{}' member 'node_feat': feature ({}, {}) is not finite", data.path(),
                   r0 + static_cast<std::int64_t>(k) / f, static_cast<std::int64_t>(k) % f);
    fn(buf);
  }
}

std::string data_npz(const std::string& dir) { return (fs::path(dir) / "raw/data.npz").string(); }

}  // namespace

std::int64_t read_ogb_npz_vertex_data(const std::string& dir, Dataset& d) {
  const NpzArchive data(data_npz(dir));
  const auto [n, f] = matrix_shape(data, "node_feat");
  d.features = f;
  for_feature_blocks(data, [](std::span<const float>) {});
  check_num_nodes(data, n);
  read_ogb_npz_labels(dir, n, d);
  return n;
}

EdgeDraws ogb_npz_edge_draws(const std::string& dir, std::int64_t n, bool directed) {
  struct Reader {  // one thread's: the archive and its cursors on the sources and targets (one, Fortran order)
    NpzArchive data;
    std::unique_ptr<NpyCursor> src, dst;
    explicit Reader(const std::string& path) : data(path), src(std::make_unique<NpyCursor>(data, "edge_index")) {}
  };
  auto r = std::make_shared<Reader>(data_npz(dir));
  const std::array<std::int64_t, 2> shape = matrix_shape(r->data, "edge_index");
  const std::int64_t two = shape[0], edges = shape[1];  // named, not bound: lambdas capture them
  GCNLAB_CHECK(two == 2, "'{}' member 'edge_index' is {} x {}, expected 2 x E", r->data.path(), two, edges);
  const bool pairs = r->src->header().fortran;  // column-major: edge k is elements 2k, 2k + 1
  if (!pairs) r->dst = std::make_unique<NpyCursor>(r->data, "edge_index");
  EdgeDraws g;
  g.n = n;
  g.draws = edges;
  g.directed = directed;
  if (r->src->stored()) g.serial = true;  // each rank its range, one thread
  else g.stream = r->data.path();          // deflated: rank 0 inflates it in order
  const std::string where = r->data.path() + " member 'edge_index'";
  g.draw = [r, pairs, edges, n, where](std::int64_t k0, std::int64_t k1, const EdgeEmit& emit) {
    constexpr std::int64_t kBlock = 1 << 16;
    std::vector<std::int64_t> a, b;
    for (std::int64_t k = k0; k < k1; k += kBlock) {
      const std::int64_t count = std::min(kBlock, k1 - k);
      a.resize(static_cast<std::size_t>(pairs ? 2 * count : count));
      b.resize(pairs ? 0 : a.size());
      r->src->read<std::int64_t>(pairs ? 2 * k : k, a);
      if (!pairs) r->dst->read<std::int64_t>(edges + k, b);
      for (std::int64_t e = 0; e < count; ++e) {
        const std::int64_t u = pairs ? a[2 * e] : a[e], v = pairs ? a[2 * e + 1] : b[e];
        for (const std::int64_t id : {u, v})
          GCNLAB_CHECK(id >= 0 && id < n, "{}: edge {} names vertex {}, out of range [0, {})", where, k + e, id, n);
        emit(u, v);
      }
    }
  };
  return g;
}

void write_ogb_npz_features(const std::string& dir, const std::string& path) {
  const NpzArchive data(data_npz(dir));
  AtomicFile file(path);
  for_feature_blocks(data, [&](std::span<const float> rows) {
    file.stream().write(reinterpret_cast<const char*>(rows.data()), static_cast<std::streamsize>(rows.size_bytes()));
  });
  file.commit();
}

}  // namespace gcnlab

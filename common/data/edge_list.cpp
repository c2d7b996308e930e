// Text graph formats users have (plain or gzip, read line by line):
//
// edges:FILE[,directed=0,base=0,nodes=N,features=128,classes=32,seed=1]
//   SNAP-style edge lists: one edge "u v" per line (tabs, spaces or a comma;
//   further columns such as weights or timestamps are ignored), lines starting
//   with '#' or '%' are comments. Ids are `base`-based (0 or 1); n = `nodes`
//   when given (ids beyond it are an error), else the largest id + 1.
//   directed=0 (default) symmetrises. Vertex data is synthetic, as for mtx:.
//
// ogb:DIR[,split=NAME,directed=0]
//   An OGB node-property-prediction directory in OGB's own raw layout:
//     DIR/raw/edge.csv.gz            "u,v" per line, 0-based
//     DIR/raw/node-feat.csv.gz       one row of comma-separated floats per vertex
//     DIR/raw/node-label.csv.gz      one label per vertex ("nan" = unlabeled)
//     DIR/raw/num-node-list.csv.gz   the number of vertices (optional)
//     DIR/split/NAME/{train,valid,test}.csv.gz   vertex ids, one per line
//   or OGB's .npz form, as its largest dataset (ogbn-papers100M) ships:
//     DIR/raw/data.npz               edge_index (2 x E), node_feat (N x F), num_nodes_list
//     DIR/raw/node-label.npz         node_label (N x 1, nan = unlabeled)
//   (npz_datasets.cpp) with the same split/ folder.
//   NAME defaults to the only folder under split/. directed=0 (default)
//   symmetrises, as GCN baselines on OGB do (ogbn-arxiv: to_undirected;
//   ogbn-products: OGB's add_inverse_edge).
//
// Both stream: the edge file is read once per pass of csr_from_edge_passes
// (edges: without nodes=, once more to find n), so the peak is the final CSR
// (plus duplicate edges), and features are parsed straight into the feature
// matrix.

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>

#include "common/core/atomic_file.hpp"
#include "common/data/dataset.hpp"
#include "common/data/line_reader.hpp"
#include "common/data/spec_args.hpp"

namespace gcnlab {

namespace {

namespace fs = std::filesystem;

bool comment(const std::string& line) { return blank(line) || line[0] == '#' || line[0] == '%'; }

// An integer at p (after spaces, tabs or one comma); advances p.
bool parse_id(const char*& p, long long& out) {
  while (*p == ' ' || *p == '\t') ++p;
  if (*p == ',') ++p;
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(p, &end, 10);
  if (end == p || errno != 0) return false;
  p = end;
  return *p == '\0' || *p == ' ' || *p == '\t' || *p == ',';
}

std::string base_name(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  if (name.empty()) name = fs::path(path).parent_path().filename().string();
  for (const char* ext : {".gz", ".txt", ".tsv", ".csv", ".edges", ".el"})
    if (name.size() > std::strlen(ext) && name.compare(name.size() - std::strlen(ext), std::string::npos, ext) == 0)
      name.resize(name.size() - std::strlen(ext));
  return name;
}

// One pass over a text edge list: emit(u - base, v - base) for every edge, ids
// checked against n when n >= 0. Returns the largest id (after the shift) and
// the number of edges. The loaders read a file once per pass of
// csr_from_edge_passes, so no edge list is ever held.
// One line of an edge list (`where`: "line N" or "byte B" for messages).
void read_edge(const std::string& path, const std::string& line, LinePlace where, long long base, long long n,
               const EdgeEmit& emit, EdgeScan& scan) {
  if (comment(line)) return;
  const char* p = line.c_str();
  long long u = 0, v = 0;
  GCNLAB_CHECK(parse_id(p, u) && parse_id(p, v), "'{}' {}: malformed edge '{}' (expected two vertex ids)", path, where,
               line);
  for (long long id : {u, v}) {
    GCNLAB_CHECK(id >= base, "'{}' {}: vertex id {} is below the first id {} (base={})", path, where, id, base, base);
    GCNLAB_CHECK(n < 0 || id - base < n, "'{}' {}: vertex id {} is out of range ({} vertices, base={})", path, where,
                 id, n, base);
  }
  emit(u - base, v - base);
  scan.max_id = std::max<long long>({scan.max_id, u - base, v - base});
  ++scan.edges;
}

EdgeScan read_edges(const std::string& path, long long base, long long n, const EdgeEmit& emit) {
  LineReader in(path);
  EdgeScan scan;
  std::string line;
  while (in.next(line)) read_edge(path, line, LinePlace{"line", in.number()}, base, n, emit, scan);
  return scan;
}

// The edges of draws [k0, k1) of an edge list (edge_list_draws): the lines
// that start in bytes [k0, k1) of an uncompressed file, lines [k0, k1) of a
// gzip one (`stream`: its reader, kept between calls).
EdgeScan read_edge_draws(const std::string& path, LineStream* stream, std::int64_t k0, std::int64_t k1, long long base,
                         long long n, const EdgeEmit& emit) {
  EdgeScan scan;
  if (stream)
    stream->read(k0, k1, [&](const std::string& line, std::int64_t k) {
      read_edge(path, line, LinePlace{"line", k + 1}, base, n, emit, scan);
    });
  else
    for_lines_in_bytes(path, k0, k1, [&](const std::string& line, std::int64_t at) {
      read_edge(path, line, LinePlace{"byte", at}, base, n, emit, scan);
    });
  return scan;
}

// The adjacency of a text edge list of n vertices, read twice (csr_from_edge_passes).
HostCsr read_adjacency(const std::string& path, long long base, std::int64_t n, bool symmetrize) {
  return csr_from_edge_passes(n, [&](const EdgeEmit& emit) { read_edges(path, base, n, emit); }, symmetrize);
}

// One integer per line (ids or labels); "nan" (OGB's unlabeled) reads as -1 when allowed.
std::vector<std::int64_t> read_column(const std::string& path, bool nan_allowed) {
  LineReader in(path);
  std::vector<std::int64_t> v;
  std::string line;
  while (in.next(line)) {
    if (blank(line)) continue;
    if (nan_allowed && (line == "nan" || line == "NaN")) {
      v.push_back(-1);
      continue;
    }
    const char* p = line.c_str();
    long long x = 0;
    GCNLAB_CHECK(parse_id(p, x) && blank(p), "'{}' line {}: '{}' is not an integer", path, in.number(), line);
    if (nan_allowed && x < 0) x = -1;
    v.push_back(x);
  }
  return v;
}

std::string require_file(const std::string& dir, const std::string& file) {
  const std::string path = (fs::path(dir) / file).string();
  GCNLAB_CHECK(fs::exists(path),
               "ogb: '{}' is missing (expected OGB's raw layout: raw/edge.csv.gz, raw/node-feat.csv.gz, "
               "raw/node-label.csv.gz, split/NAME/{{train,valid,test}}.csv.gz)",
               path);
  return path;
}

// Each row of OGB's node-feat.csv.gz, parsed and checked (finite values, the
// first row's width), handed to fn(row); returns the width.
std::int64_t for_feature_rows(const std::string& path, const std::function<void(std::span<const float>)>& fn) {
  LineReader in(path);
  std::string line;
  std::vector<float> row;
  std::int64_t width = 0;
  while (in.next(line)) {
    row.clear();
    const char* p = line.c_str();
    while (*p) {
      char* end = nullptr;
      const float x = std::strtof(p, &end);
      GCNLAB_CHECK(end != p && std::isfinite(x), "'{}' line {}: malformed feature value in column {}", in.path(),
                   in.number(), row.size() + 1);
      row.push_back(x);
      p = end;
      while (*p == ' ' || *p == '\t') ++p;
      if (*p == ',') ++p;
    }
    const auto cols = static_cast<std::int64_t>(row.size());
    if (width == 0) width = cols;
    GCNLAB_CHECK(cols == width, "'{}' line {}: {} features, the first line has {}", in.path(), in.number(), cols,
                 width);
    fn(row);
  }
  return width;
}

// OGB's csv.gz form: the features' width and their rows' count, n (checked against num-node-list).
std::int64_t ogb_csv_nodes(const std::string& dir, std::int64_t features, std::int64_t rows) {
  GCNLAB_CHECK(features > 0, "ogb: '{}/raw/node-feat.csv.gz' is empty", dir);
  if (fs::exists(fs::path(dir) / "raw/num-node-list.csv.gz")) {
    const auto counts = read_column((fs::path(dir) / "raw/num-node-list.csv.gz").string(), false);
    GCNLAB_CHECK(counts.size() == 1 && counts[0] == rows, "ogb: num-node-list.csv.gz says {} vertices, node-feat has {}",
                 counts.empty() ? 0 : counts[0], rows);
  }
  return rows;
}

// OGB's labels (nan: -1) for n vertices; d.classes from them.
void read_ogb_labels(const std::string& dir, std::int64_t n, Dataset& d) {
  const std::string path = require_file(dir, "raw/node-label.csv.gz");
  const auto labels = read_column(path, true);
  GCNLAB_CHECK(static_cast<std::int64_t>(labels.size()) == n, "ogb: node-label.csv.gz has {} rows for {} vertices",
               labels.size(), n);
  for (std::int64_t v = 0; v < n; ++v)
    GCNLAB_CHECK(labels[v] < kLabelLimit, "'{}': label {} of vertex {} is out of range (class numbers are below {})",
                 path, labels[v], v, kLabelLimit);
  d.labels.assign(labels.begin(), labels.end());
  d.classes = static_cast<int>(*std::max_element(labels.begin(), labels.end()) + 1);
}

// OGB's csv.gz form: features first (they fix n, or num-node-list does), the graph, the labels.
void read_ogb_csv(const std::string& dir, Dataset& d) {
  d.features = for_feature_rows(require_file(dir, "raw/node-feat.csv.gz"),
                                [&](std::span<const float> row) { d.x.insert(d.x.end(), row.begin(), row.end()); });
  const std::int64_t n =
      ogb_csv_nodes(dir, d.features, d.features ? static_cast<std::int64_t>(d.x.size()) / d.features : 0);
  d.adj = read_adjacency(require_file(dir, "raw/edge.csv.gz"), 0, n, !d.directed);
  read_ogb_labels(dir, n, d);
}

// The split of OGB's split/NAME folder (the only one when NAME is empty) for n vertices.
std::vector<std::uint8_t> read_ogb_split(const std::string& dir, std::string split, std::int64_t n) {
  if (split.empty()) {
    const fs::path root = fs::path(dir) / "split";
    GCNLAB_CHECK(fs::is_directory(root), "ogb: '{}' is missing (expected split/NAME/train.csv.gz)", root.string());
    for (const auto& e : fs::directory_iterator(root)) {
      if (!e.is_directory()) continue;
      GCNLAB_CHECK(split.empty(), "ogb: '{}' holds several splits; choose one with ogb:DIR,split=NAME", root.string());
      split = e.path().filename().string();
    }
  }
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n), ew::kNone);
  for (const auto& [file, kind] : {std::pair{"train", ew::kTrain}, {"valid", ew::kVal}, {"test", ew::kTest}}) {
    const std::string path = require_file(dir, fmt::format("split/{}/{}.csv.gz", split, file));
    for (std::int64_t v : read_column(path, false)) {
      GCNLAB_CHECK(v >= 0 && v < n, "'{}': vertex {} is out of range [0, {})", path, v, n);
      out[v] = kind;
    }
  }
  return out;
}

}  // namespace

namespace {

struct EdgeListSpec {
  std::string path;
  long long base, nodes;  // nodes: -1 = the largest id + 1
  std::int64_t features;
  int classes;
  std::uint64_t seed;
  bool directed;
};

EdgeListSpec edge_list_spec(const DatasetSpec& spec) {
  const SpecArgs a(spec, {"directed", "base", "nodes", "features", "classes", "seed"});
  const EdgeListSpec s{a.str("path"), a.integer("base", 0), a.integer("nodes", -1, 1), a.integer("features", 128, 1),
                       static_cast<int>(a.integer("classes", 32, 1)), static_cast<std::uint64_t>(a.integer("seed", 1)),
                       a.integer("directed", 0) != 0};
  GCNLAB_CHECK(s.base == 0 || s.base == 1, "edges: base must be 0 or 1");
  return s;
}

}  // namespace

DatasetFacts edge_list_facts(const DatasetSpec& spec) {
  const EdgeListSpec s = edge_list_spec(spec);
  return {.nodes = s.nodes > 0 ? s.nodes : 0, .features = s.features, .classes = s.classes};
}

std::int64_t edge_list_nodes(const std::string& path, long long max_id, std::int64_t edges) {
  const std::int64_t n = max_id + 1;
  GCNLAB_CHECK(n >= 1, "'{}' holds no edges", path);
  // ids far beyond the edges they appear in: a sparse id space (or a damaged
  // file) that would be allocated as mostly isolated vertices
  GCNLAB_CHECK(n <= std::max<std::int64_t>(1 << 20, 128 * edges),
               "'{}': vertex id {} implies {} vertices for {} edges; give nodes=N if that is meant, or renumber the "
               "ids densely",
               path, max_id, n, edges);
  return n;
}

Dataset read_edge_list(const DatasetSpec& spec) {
  const EdgeListSpec s = edge_list_spec(spec);
  const std::string& path = s.path;
  const long long base = s.base;
  std::int64_t n = s.nodes;
  if (n < 0) {  // a first pass finds n
    const EdgeScan scan = read_edges(path, base, -1, [](std::int64_t, std::int64_t) {});
    n = edge_list_nodes(path, scan.max_id, scan.edges);
  }
  Dataset d = edge_list_vertex_facts(spec);
  d.adj = read_adjacency(path, base, n, !d.directed);
  add_synthetic_vertex_data(d, s.features, s.classes, s.seed);
  return d;
}

Dataset edge_list_vertex_facts(const DatasetSpec& spec) {
  const EdgeListSpec s = edge_list_spec(spec);
  Dataset d;
  d.name = base_name(s.path);
  d.directed = s.directed;
  set_synthetic_facts(d, s.features, s.classes, s.seed);
  return d;
}

EdgeDraws edge_list_draws(const DatasetSpec& spec, std::int64_t n) {
  const EdgeListSpec s = edge_list_spec(spec);
  EdgeDraws g;
  g.n = n >= 0 ? n : s.nodes;
  g.directed = s.directed;
  std::shared_ptr<LineStream> stream;
  if (gzipped(s.path)) {
    g.stream = s.path, g.draws = -1;
    stream = std::make_shared<LineStream>(s.path);
  } else {
    g.draws = static_cast<std::int64_t>(fs::file_size(s.path));
  }
  g.draw = [path = s.path, stream, base = s.base, checked = g.n](std::int64_t k0, std::int64_t k1,
                                                                  const EdgeEmit& emit) {
    read_edge_draws(path, stream.get(), k0, k1, base, checked, emit);
  };
  return g;
}

EdgeScan edge_list_scan(const DatasetSpec& spec, std::int64_t k0, std::int64_t k1) {
  const EdgeListSpec s = edge_list_spec(spec);
  std::unique_ptr<LineStream> stream = gzipped(s.path) ? std::make_unique<LineStream>(s.path) : nullptr;
  return read_edge_draws(s.path, stream.get(), k0, k1, s.base, s.nodes, [](std::int64_t, std::int64_t) {});
}

namespace {

struct OgbSpec {
  std::string dir, split;
  bool directed;
};

OgbSpec ogb_spec(const DatasetSpec& spec) {
  const SpecArgs a(spec, {"split", "directed"});
  OgbSpec s{a.str("path"), a.has("split") ? a.str("split") : "", a.integer("directed", 0) != 0};
  GCNLAB_CHECK(fs::is_directory(s.dir), "ogb: '{}' is not a directory", s.dir);
  return s;
}

}  // namespace

Dataset read_ogb(const DatasetSpec& spec) {
  Dataset d = ogb_vertex_facts(spec);
  const OgbSpec s = ogb_spec(spec);
  if (!read_ogb_npz(s.dir, d)) read_ogb_csv(s.dir, d);
  d.split = read_ogb_split(s.dir, s.split, d.nodes());
  return d;
}

Dataset ogb_vertex_facts(const DatasetSpec& spec) {
  const OgbSpec s = ogb_spec(spec);
  Dataset d;
  d.name = base_name(s.dir);
  d.directed = s.directed;
  return d;
}

namespace {

bool npz_form(const OgbSpec& s) { return fs::exists(fs::path(s.dir) / "raw/data.npz"); }

}  // namespace

std::int64_t read_ogb_vertex_data(const DatasetSpec& spec, Dataset& d) {
  const OgbSpec s = ogb_spec(spec);
  std::int64_t n = 0;
  if (npz_form(s)) {
    n = read_ogb_npz_vertex_data(s.dir, d);
  } else {
    std::int64_t rows = 0;
    d.features = for_feature_rows(require_file(s.dir, "raw/node-feat.csv.gz"), [&](std::span<const float>) { ++rows; });
    n = ogb_csv_nodes(s.dir, d.features, rows);
    read_ogb_labels(s.dir, n, d);
  }
  d.split = read_ogb_split(s.dir, s.split, n);
  for (std::int64_t v = 0; v < n; ++v)
    GCNLAB_CHECK(d.labels[v] >= 0 || d.split[v] == ew::kNone,
                 "dataset '{}': vertex {} is in a train/val/test split but has no label", d.spec, v);
  return n;
}

EdgeDraws ogb_edge_draws(const DatasetSpec& spec, std::int64_t n) {
  const OgbSpec s = ogb_spec(spec);
  if (npz_form(s)) return ogb_npz_edge_draws(s.dir, n, s.directed);
  return edge_list_draws({"edges",
                          {{"path", require_file(s.dir, "raw/edge.csv.gz")},
                           {"nodes", std::to_string(n)},
                           {"directed", s.directed ? "1" : "0"}}});
}

void write_ogb_features(const DatasetSpec& spec, const std::string& path) {
  if (npz_form(ogb_spec(spec))) return write_ogb_npz_features(ogb_spec(spec).dir, path);
  AtomicFile file(path);
  for_feature_rows(require_file(ogb_spec(spec).dir, "raw/node-feat.csv.gz"), [&](std::span<const float> row) {
    file.stream().write(reinterpret_cast<const char*>(row.data()), static_cast<std::streamsize>(row.size_bytes()));
  });
  file.commit();
}

}  // namespace gcnlab

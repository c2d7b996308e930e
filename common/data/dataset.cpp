#include "common/data/dataset.hpp"
#include "common/data/shards.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/core/error.hpp"
#include "common/core/fingerprint.hpp"
#include "common/core/rng.hpp"

namespace gcnlab {

DatasetSpec parse_dataset_spec(const std::string& spec) {
  const auto colon = spec.find(':');
  GCNLAB_CHECK(colon != std::string::npos && colon > 0,
               "malformed --dataset '{}' (expected KIND:ARGS, e.g. sbm:nodes=1000 or mtx:FILE.mtx)",
               spec);
  DatasetSpec s;
  s.kind = spec.substr(0, colon);
  std::string rest = spec.substr(colon + 1);
  std::size_t start = 0;
  while (start <= rest.size() && !rest.empty()) {
    const std::size_t comma = rest.find(',', start);
    const std::string item = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) {
      GCNLAB_CHECK(!item.empty() && !s.args.count("path"), "malformed --dataset '{}'", spec);
      s.args["path"] = item;
    } else {
      s.args[item.substr(0, eq)] = item.substr(eq + 1);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return s;
}

void Dataset::synthetic_row(std::int64_t v, std::int32_t y, std::int64_t c0, std::int64_t c1, float* out) const {
  // Uniform(-1, 1) noise plus, for SBM, +-class_signal from a per-(class, column) sign.
  for (std::int64_t c = c0; c < c1; ++c) {
    float value = 2.f * rng::uniform(feature_seed, rng::stream(rng::Stream::features), v, c) - 1.f;
    if (class_signal != 0.f && y >= 0) {
      const bool plus = rng::uniform(feature_seed, rng::stream(rng::Stream::class_signs), y, c) < 0.5f;
      value += plus ? class_signal : -class_signal;
    }
    out[c - c0] = value;
  }
}

void Dataset::feature_rows(std::span<const std::int64_t> vertices, std::int64_t c0, std::int64_t c1,
                           float* out) const {
  const std::int64_t w = c1 - c0;
  if (synthetic_features) {
    const std::vector<std::int32_t> y = class_signal != 0.f ? labels_of(vertices) : std::vector<std::int32_t>{};
    for (std::size_t i = 0; i < vertices.size(); ++i) synthetic_row(vertices[i], y.empty() ? -1 : y[i], c0, c1, out + i * w);
  } else if (shards) {
    shards->features(vertices, c0, c1, out);
  } else {
    for (std::size_t i = 0; i < vertices.size(); ++i)
      std::copy(x.begin() + vertices[i] * features + c0, x.begin() + vertices[i] * features + c1, out + i * w);
  }
}

std::vector<std::int32_t> Dataset::labels_of(std::span<const std::int64_t> vertices) const {
  if (shards) return shards->labels(vertices);
  std::vector<std::int32_t> y(vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i) y[i] = labels[vertices[i]];
  return y;
}

std::vector<std::uint8_t> Dataset::split_of(std::span<const std::int64_t> vertices) const {
  if (shards) return shards->split(vertices);
  std::vector<std::uint8_t> s(vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i) s[i] = split[vertices[i]];
  return s;
}

std::int64_t Dataset::nodes() const { return shards ? shards->meta().nodes : adj.rows; }
std::int64_t Dataset::nnz() const { return shards ? shards->meta().nnz : adj.nnz(); }

std::string dataset_fingerprint(const Dataset& d, std::string_view like) {
  if (d.shards) return d.shards->meta().fingerprint;
  Fingerprint h(Fingerprint::kind_of(like));
  const std::int64_t shape[] = {d.nodes(), d.features, d.classes, d.directed};
  h.add_values(std::span<const std::int64_t>(shape));
  h.add_values(std::span<const std::int64_t>(d.adj.rowptr)).add_values(std::span<const std::int64_t>(d.adj.col));
  h.add_values(std::span<const std::int32_t>(d.labels)).add_values(std::span<const std::uint8_t>(d.split));
  if (d.synthetic_features) {
    const std::uint64_t seed = d.feature_seed;
    h.add_values(std::span<const std::uint64_t>(&seed, 1)).add_values(std::span<const float>(&d.class_signal, 1));
  }
  return h.hex();
}

std::int64_t Dataset::count(ew::Split s) const {
  if (shards) return shards->meta().split_counts[s];
  return std::count(split.begin(), split.end(), static_cast<std::uint8_t>(s));
}

void row_normalize_features(Dataset& d) {
  GCNLAB_ASSERT(!d.synthetic_features);
  for (std::int64_t v = 0; v < d.nodes(); ++v) {
    float* row = d.x.data() + v * d.features;
    double sum = 0;
    for (std::int64_t c = 0; c < d.features; ++c) sum += row[c];
    if (sum == 0) continue;
    const float inv = static_cast<float>(1.0 / sum);
    for (std::int64_t c = 0; c < d.features; ++c) row[c] *= inv;
  }
}

std::uint8_t random_split(std::int64_t v, double train, double val, std::uint64_t seed) {
  const double u = rng::uniform_double(seed, rng::stream(rng::Stream::split), v, 0);
  return u < train ? ew::kTrain : u < train + val ? ew::kVal : ew::kTest;
}

void assign_random_split(Dataset& d, double train, double val, std::uint64_t seed) {
  d.split.assign(d.nodes(), ew::kNone);
  for (std::int64_t v = 0; v < d.nodes(); ++v) d.split[v] = random_split(v, train, val, seed);
}

void set_synthetic_facts(Dataset& d, std::int64_t features, int classes, std::uint64_t seed) {
  GCNLAB_CHECK(features >= 1, "features must be >= 1");
  GCNLAB_CHECK(classes >= 1, "classes must be >= 1");
  d.features = features;
  d.synthetic_features = true;
  d.feature_seed = seed;
  d.classes = classes;
}

void add_synthetic_vertex_data(Dataset& d, std::int64_t features, int classes, std::uint64_t seed) {
  set_synthetic_facts(d, features, classes, seed);
  const std::int64_t n = d.nodes();
  // Degree buckets of equal size: sort vertices by (degree, id), cut into `classes` parts.
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto degree = [&](std::int64_t v) { return d.adj.rowptr[v + 1] - d.adj.rowptr[v]; };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return degree(a) < degree(b); });
  d.labels.assign(n, 0);
  for (std::int64_t r = 0; r < n; ++r) d.labels[order[r]] = degree_bucket(r, classes, n);
  assign_random_split(d, kSyntheticTrain, kSyntheticVal, seed);
}

namespace {

void validate(const Dataset& d) {
  if (d.shards) return;  // checked when prepared; reads check what they read
  const std::int64_t n = d.nodes();
  GCNLAB_CHECK(n >= 1, "dataset '{}' has no vertices", d.spec);
  GCNLAB_CHECK(d.adj.cols == n, "dataset '{}': adjacency is {}x{}, not square", d.spec, n, d.adj.cols);
  GCNLAB_CHECK(d.features >= 1, "dataset '{}' has no features", d.spec);
  GCNLAB_CHECK(d.classes >= 1, "dataset '{}' has no classes", d.spec);
  GCNLAB_CHECK(static_cast<std::int64_t>(d.labels.size()) == n &&
                   static_cast<std::int64_t>(d.split.size()) == n,
               "dataset '{}': labels/split do not cover all {} vertices", d.spec, n);
  if (!d.synthetic_features) {
    GCNLAB_CHECK(static_cast<std::int64_t>(d.x.size()) == n * d.features,
                 "dataset '{}': feature matrix has {} values, expected {} x {}", d.spec, d.x.size(),
                 n, d.features);
    for (std::size_t k = 0; k < d.x.size(); ++k)
      GCNLAB_CHECK(std::isfinite(d.x[k]), "dataset '{}': feature ({}, {}) is {} (features must be finite)",
                   d.spec, k / d.features, k % d.features, d.x[k]);
  }
  for (std::int64_t v = 0; v < n; ++v) {
    const std::int32_t y = d.labels[v];
    GCNLAB_CHECK(y >= -1 && y < d.classes, "dataset '{}': label {} of vertex {} is out of range [0, {})",
                 d.spec, y, v, d.classes);
    GCNLAB_CHECK(y >= 0 || d.split[v] == ew::kNone,
                 "dataset '{}': vertex {} is in a train/val/test split but has no label", d.spec, v);
  }
  GCNLAB_CHECK(d.count(ew::kTrain) > 0, "dataset '{}' has no training vertices", d.spec);
}

}  // namespace

std::optional<DatasetFacts> dataset_facts(const std::string& spec_text) {
  const DatasetSpec spec = parse_dataset_spec(spec_text);
  if (spec.kind == "sbm") return sbm_facts(spec);
  if (spec.kind == "rmat") return rmat_facts(spec);
  if (spec.kind == "edges") return edge_list_facts(spec);
  if (spec.kind == "gcl" && spec.args.count("path") && is_shard_directory(spec.args.at("path"))) {
    const ShardMeta m = read_shard_meta(spec.args.at("path"));
    return DatasetFacts{.nodes = m.nodes, .nnz = m.nnz, .features = m.features, .classes = m.classes,
                        .stored_features = !m.synthetic_features, .prepared = true};
  }
  return std::nullopt;
}

Dataset load_dataset(const std::string& spec_text) {
  const DatasetSpec spec = parse_dataset_spec(spec_text);
  Dataset d;
  if (spec.kind == "sbm") d = generate_sbm(spec);
  else if (spec.kind == "rmat") d = generate_rmat(spec);
  else if (spec.kind == "mtx") d = read_matrix_market(spec);
  else if (spec.kind == "planetoid") d = read_planetoid(spec);
  else if (spec.kind == "gcl") {
    GCNLAB_CHECK(spec.args.count("path"), "gcl: needs a path (gcl:FILE or gcl:DIR)");
    const std::string& path = spec.args.at("path");
    d = is_shard_directory(path) ? read_shard_dataset(path) : read_gcl(path);
  } else if (spec.kind == "ogb")
    d = read_ogb(spec);
  else if (spec.kind == "reddit")
    d = read_reddit(spec);
  else if (spec.kind == "edges")
    d = read_edge_list(spec);
  else
    fail("unknown dataset kind '{}' in '{}' (expected sbm, rmat, planetoid, mtx, edges, ogb, reddit or gcl)", spec.kind,
         spec_text);
  d.spec = spec_text;
  validate(d);
  return d;
}

DatasetInfo dataset_info(const Dataset& d) {
  if (d.shards) return d.shards->meta().info;  // computed when prepared
  DatasetInfo info{};
  const std::int64_t n = d.nodes();
  info.nodes = n;
  info.nnz = d.adj.nnz();
  info.nnz_with_self_loops = info.nnz + n;
  info.degree_min = n ? INT64_MAX : 0;
  for (std::int64_t v = 0; v < n; ++v) {
    const std::int64_t deg = d.adj.rowptr[v + 1] - d.adj.rowptr[v];
    info.degree_min = std::min(info.degree_min, deg);
    info.degree_max = std::max(info.degree_max, deg);
    info.isolated += deg == 0;
  }
  info.degree_mean = n ? static_cast<double>(info.nnz) / n : 0;
  // Unordered pairs {u, v} joined in either direction: u -> v counts when v > u,
  // or when v < u and v -> u is absent (rows are sorted; no transposed copy).
  const HostCsr& a = d.adj;
  std::int64_t pairs = 0;
  for (std::int64_t u = 0; u < n; ++u)
    for (std::int64_t k = a.rowptr[u]; k < a.rowptr[u + 1]; ++k) {
      const std::int64_t v = a.col[k];
      if (v > u) ++pairs;
      else if (v < u) pairs += !std::binary_search(a.col.begin() + a.rowptr[v], a.col.begin() + a.rowptr[v + 1], u);
    }
  info.edges_undirected = pairs;
  return info;
}

}  // namespace gcnlab

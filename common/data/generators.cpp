// Synthetic graphs: a planted-partition SBM whose labels are learnable, and
// Graph500's R-MAT. Both are pure functions of their parameters and seed.

#include <algorithm>
#include <memory>

#include "common/core/rng.hpp"
#include "common/data/dataset.hpp"
#include "common/data/spec_args.hpp"

namespace gcnlab {

namespace {

// The arguments of each generator, read once for the generator and its facts.
struct SbmSpec {
  std::int64_t n, degree, f;
  int k;
  std::uint64_t seed;
  double intra, signal, train, val;
  bool directed;
};

SbmSpec sbm_spec(const DatasetSpec& spec) {
  const SpecArgs a(spec, {"nodes", "classes", "avg-degree", "features", "seed", "intra", "signal",
                          "directed", "train", "val"});
  const SbmSpec s{a.integer("nodes", 20000, 1),
                  a.integer("avg-degree", 16, 0),
                  a.integer("features", 64, 1),
                  static_cast<int>(a.integer("classes", 8, 1)),
                  static_cast<std::uint64_t>(a.integer("seed", 1)),
                  a.real("intra", 0.3),
                  a.real("signal", 0.1),
                  a.real("train", 0.1),
                  a.real("val", 0.1),
                  a.integer("directed", 0) != 0};
  GCNLAB_CHECK(s.intra >= 0 && s.intra <= 1, "sbm: intra must be in [0, 1]");
  return s;
}

struct RmatSpec {
  int scale;
  std::int64_t ef, f;
  int classes;
  std::uint64_t seed;
  bool directed;
  std::int64_t n() const { return std::int64_t{1} << scale; }
};

RmatSpec rmat_spec(const DatasetSpec& spec) {
  const SpecArgs a(spec, {"scale", "edge-factor", "features", "classes", "seed", "directed"});
  const RmatSpec s{static_cast<int>(a.integer("scale", 16, 1)),
                   a.integer("edge-factor", 16, 1),
                   a.integer("features", 128, 1),
                   static_cast<int>(a.integer("classes", 32, 1)),
                   static_cast<std::uint64_t>(a.integer("seed", 1)),
                   a.integer("directed", 0) != 0};
  GCNLAB_CHECK(s.scale <= 40, "rmat: scale {} is too large", s.scale);
  return s;
}

std::int32_t sbm_label(std::uint64_t seed, int classes, std::int64_t v) {
  return static_cast<std::int32_t>(rng::key(seed, rng::stream(rng::Stream::labels), v, 0) % classes);
}

}  // namespace

DatasetFacts sbm_facts(const DatasetSpec& spec) {
  const SbmSpec s = sbm_spec(spec);
  return {.nodes = s.n, .features = s.f, .classes = s.k};
}

DatasetFacts rmat_facts(const DatasetSpec& spec) {
  const RmatSpec s = rmat_spec(spec);
  return {.nodes = s.n(), .features = s.f, .classes = s.classes};
}

// sbm:nodes=N,classes=K,avg-degree=D,features=F,seed=S[,intra=0.3,signal=0.1,directed=0,train=0.1,val=0.1]
// Vertex v belongs to class hash(v) mod K. Each vertex draws D/2 edges; an
// edge stays inside the class with probability `intra`, else goes to a
// uniformly random vertex. Features are uniform noise plus a +-signal pattern
// per class, so structure *and* features carry the label.
// Draw k is edge k % per_vertex of vertex k / per_vertex, a pure function of
// (seed, k) and the classes' member lists (8 bytes a vertex, built by whoever
// draws), so any range of draws is drawn alone.
EdgeDraws sbm_draws(const DatasetSpec& spec) {
  const SbmSpec s = sbm_spec(spec);
  const std::int64_t n = s.n;
  auto members = std::make_shared<std::vector<std::vector<std::int64_t>>>(s.k);
  for (std::int64_t v = 0; v < n; ++v) (*members)[sbm_label(s.seed, s.k, v)].push_back(v);
  // Directed graphs draw D edges per vertex (out-degree D), undirected D/2 (degree ~D).
  const std::int64_t per_vertex = s.directed ? s.degree : std::max<std::int64_t>(s.degree / 2, s.degree > 0);
  EdgeDraws g;
  g.n = n;
  g.draws = n * per_vertex;
  g.directed = s.directed;
  g.draw = [=, seed = s.seed, k = s.k, intra = s.intra, edges = rng::stream(rng::Stream::graph)](
               std::int64_t k0, std::int64_t k1, const EdgeEmit& emit) {
    for (std::int64_t draw = k0; draw < k1; ++draw) {
      const std::int64_t u = draw / per_vertex, e = draw % per_vertex;
      const double r = rng::uniform_double(seed, edges, u, 2 * e);
      const std::uint64_t pick = rng::key(seed, edges, u, 2 * e + 1);
      const auto& same = (*members)[sbm_label(seed, k, u)];
      emit(u, r < intra ? same[pick % same.size()] : static_cast<std::int64_t>(pick % n));
    }
  };
  return g;
}

Dataset sbm_vertex_facts(const DatasetSpec& spec) {
  const SbmSpec s = sbm_spec(spec);
  Dataset d;
  d.name = "sbm";
  d.directed = s.directed;
  d.classes = s.k;
  d.features = s.f;
  d.synthetic_features = true;
  d.feature_seed = s.seed;
  d.class_signal = static_cast<float>(s.signal);
  return d;
}

VertexLabels sbm_vertex_labels(const DatasetSpec& spec) {
  const SbmSpec s = sbm_spec(spec);
  return {[seed = s.seed, k = s.k](std::int64_t v) { return sbm_label(seed, k, v); },
          [s](std::int64_t v) { return random_split(v, s.train, s.val, s.seed); }};
}

Dataset generate_sbm(const DatasetSpec& spec) {
  const SbmSpec s = sbm_spec(spec);
  const EdgeDraws g = sbm_draws(spec);
  Dataset d = sbm_vertex_facts(spec);
  d.labels.resize(s.n);
  for (std::int64_t v = 0; v < s.n; ++v) d.labels[v] = sbm_label(s.seed, s.k, v);
  // Edges are drawn again on each pass of csr_from_edge_passes (never held as a list).
  d.adj = csr_from_edge_passes(g.n, [&](const EdgeEmit& emit) { g.draw(0, g.draws, emit); }, !s.directed);
  assign_random_split(d, s.train, s.val, s.seed);
  return d;
}

// rmat:scale=S,edge-factor=E,features=F,classes=K,seed=S[,directed=0]
// Graph500 R-MAT (a=.57, b=c=.19, d=.05) with 2^S vertices and E*2^S edge
// draws; vertex ids are not scrambled, so the raw ordering is as skewed as
// R-MAT makes it (the "original" column of Plexus' Table 3). Draw e is a pure
// function of (seed, e): any range of draws is drawn alone, in any order.
EdgeDraws rmat_draws(const DatasetSpec& spec) {
  const RmatSpec s = rmat_spec(spec);
  const int scale = s.scale;
  const std::uint64_t seed = s.seed, edges = rng::stream(rng::Stream::graph);
  constexpr double A = 0.57, B = 0.19, C = 0.19;
  EdgeDraws g;
  g.n = s.n();
  g.draws = s.ef * g.n;
  g.directed = s.directed;
  g.draw = [=](std::int64_t e0, std::int64_t e1, const EdgeEmit& emit) {
    for (std::int64_t e = e0; e < e1; ++e) {
      std::int64_t u = 0, v = 0;
      for (int level = 0; level < scale; ++level) {
        const double r = rng::uniform_double(seed, edges, e, level);
        const int bu = r >= A + B, bv = (r >= A && r < A + B) || r >= A + B + C;
        u = (u << 1) | bu;
        v = (v << 1) | bv;
      }
      emit(u, v);
    }
  };
  return g;
}

Dataset rmat_vertex_facts(const DatasetSpec& spec) {
  const RmatSpec s = rmat_spec(spec);
  Dataset d;
  d.name = "rmat" + std::to_string(s.scale);
  d.directed = s.directed;
  set_synthetic_facts(d, s.f, s.classes, s.seed);
  return d;
}

Dataset generate_rmat(const DatasetSpec& spec) {
  const RmatSpec s = rmat_spec(spec);
  const EdgeDraws g = rmat_draws(spec);
  Dataset d = rmat_vertex_facts(spec);
  // Drawn again on each pass, in parallel blocks of draws.
  constexpr std::int64_t kBlock = 1 << 14;
  d.adj = csr_from_edge_passes(
      g.n,
      [&](const EdgeEmit& emit) {
#pragma omp parallel for schedule(static)
        for (std::int64_t b = 0; b < (g.draws + kBlock - 1) / kBlock; ++b)
          g.draw(b * kBlock, std::min(g.draws, (b + 1) * kBlock), emit);
      },
      !s.directed);
  add_synthetic_vertex_data(d, s.f, s.classes, s.seed);
  return d;
}

}  // namespace gcnlab

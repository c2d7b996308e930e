// Synthetic graphs: a planted-partition SBM whose labels are learnable, and
// Graph500's R-MAT. Both are pure functions of their parameters and seed.

#include <algorithm>

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
Dataset generate_sbm(const DatasetSpec& spec) {
  const SbmSpec s = sbm_spec(spec);
  const std::int64_t n = s.n;
  const int k = s.k;
  const std::uint64_t seed = s.seed;
  const double intra = s.intra;
  const bool directed = s.directed;

  Dataset d;
  d.name = "sbm";
  d.directed = directed;
  d.classes = k;
  d.labels.resize(n);
  std::vector<std::vector<std::int64_t>> members(k);
  for (std::int64_t v = 0; v < n; ++v) {
    d.labels[v] = static_cast<std::int32_t>(rng::key(seed, rng::stream(rng::Stream::labels), v, 0) % k);
    members[d.labels[v]].push_back(v);
  }
  // Directed graphs draw D edges per vertex (out-degree D), undirected D/2 (degree ~D).
  const std::int64_t per_vertex = directed ? s.degree : std::max<std::int64_t>(s.degree / 2, s.degree > 0);
  // Edges are drawn again on each pass of csr_from_edge_passes (never held as a list).
  const std::uint64_t edges = rng::stream(rng::Stream::graph);
  d.adj = csr_from_edge_passes(
      n,
      [&](const EdgeEmit& emit) {
        for (std::int64_t u = 0; u < n; ++u)
          for (std::int64_t e = 0; e < per_vertex; ++e) {
            const double r = rng::uniform_double(seed, edges, u, 2 * e);
            const std::uint64_t pick = rng::key(seed, edges, u, 2 * e + 1);
            const auto& same = members[d.labels[u]];
            emit(u, r < intra ? same[pick % same.size()] : static_cast<std::int64_t>(pick % n));
          }
      },
      !directed);
  d.features = s.f;
  d.synthetic_features = true;
  d.feature_seed = seed;
  d.class_signal = static_cast<float>(s.signal);
  assign_random_split(d, s.train, s.val, seed);
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

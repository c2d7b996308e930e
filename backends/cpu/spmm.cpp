#include "backends/cpu/spmm.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "common/core/error.hpp"

namespace gcnlab::cpu {

namespace {

// One SIMD register of floats (GCC/Clang vector extension, so the code is the
// same on every target): 16 on AVX-512, 8 on AVX2 and below. Each vector of a
// segment holds two accumulators (the paired chains below), so a segment is
// at most half the register file: 8 vectors of 32 registers on AVX-512, 4 of
// 16 on AVX2 (a 64-byte vector there is two registers the compiler spills).
#ifdef __AVX512F__
constexpr int kLanes = 16;
constexpr int kMaxVecs = 8;
#else
constexpr int kLanes = 8;
constexpr int kMaxVecs = 4;
#endif
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));
// Nonzeros ahead whose X rows are prefetched. 24 against 12 (R-MAT 17 and 16 at 128 features, AVX2,
// alternated over six rounds): the `spmm` category lower in 14 of 15 pairs for GCN, GraphSAGE and
// GIN, and GAT's aggregation in 6 of 6 and its fused backward in 5 of 6 (by 0-15 %).
constexpr int kPrefetch = 24;
constexpr std::int64_t kSlabWidth = kLanes * kMaxVecs;  // a full segment's floats: a packed slab's row (Slab)

inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
// A store that bypasses the caches (p aligned to the vector): an output row
// written once is not read for ownership first, which saves a third of Y's
// traffic.
inline void stream(float* p, Vec v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, reinterpret_cast<__m512>(v));
#elif defined(__AVX__)
  _mm256_stream_ps(p, reinterpret_cast<__m256>(v));
#else
  store(p, v);
#endif
}

// The sparse operand with its stored-row map.
struct Rows {
  const std::int64_t* rowptr;
  const std::int32_t* col;
  const float* val;
  const std::int32_t* ids;  // null unless compressed
  std::int64_t stored, rows, nnz;
  std::int64_t out_row(std::int64_t s) const { return ids ? ids[s] : s; }
};

// The order of every output value, whatever the ISA, the vector width and the
// column segment it falls in (docs/design.md, reproducibility): the row's
// nonzeros at even offsets from its first are summed in storage order in one
// chain, those at odd offsets in a second, each product rounded before it is
// added (the build does not contract into FMAs), and y = even + odd (+ beta y).
// Two chains also hide the add latency a single chain would expose.

// The segment's lines of nonzero k's X row, fetched ahead (one per 64-byte line). A function and not a
// lambda: GCC 12 deletes the call of a void lambda whose only statements are prefetches when it is
// called in a loop (the call has no effect it models), which left this kernel without a single
// prefetch until 2026-12-08: R-MAT 17, AVX2, its epochs' `spmm` category ~25-30 % faster with them.
template <int V>
inline void prefetch_row(const Rows& a, std::int64_t k, const float* x, std::int64_t ldx) {
  const float* p = x + static_cast<std::int64_t>(a.col[k]) * ldx;
  for (int j = 0; j < V * kLanes; j += 16) __builtin_prefetch(p + j);
}

// Y[i, j0 : j0 + kLanes V) for the stored rows [s0, s1); and beta (and the
// row term) on the rows a compressed block skips in [gap0, the last stored
// row's successor or gap1). t.r points at the segment's first column.
template <int V>
void segment(const Rows& a, std::int64_t s0, std::int64_t s1, std::int64_t gap0, std::int64_t gap1,
             const float* x, std::int64_t ldx, float* y, std::int64_t ldy, float beta, RowAddend t) {
  const bool aligned = reinterpret_cast<std::uintptr_t>(y) % sizeof(Vec) == 0 && ldy % kLanes == 0;
  const std::int64_t k_last = a.nnz - 1;
  auto plus_term = [&](std::int64_t i, int v, Vec r) { return t.r ? r + t.c * load(t.r + i * t.ldr + v * kLanes) : r; };
  auto scale_rows = [&](std::int64_t r0, std::int64_t r1) {
    if (beta == 1.f && !t.r) return;
    for (std::int64_t r = r0; r < r1; ++r)
      for (int v = 0; v < V; ++v) {
        float* yr = y + r * ldy + v * kLanes;
        store(yr, plus_term(r, v, beta == 0.f ? Vec{} : beta == 1.f ? load(yr) : load(yr) * beta));
      }
  };
  std::int64_t next_gap = gap0;
  for (std::int64_t s = s0; s < s1; ++s) {
    const std::int64_t i = a.out_row(s);
    scale_rows(next_gap, i);
    next_gap = i + 1;
    Vec even[V], odd[V];
    for (int v = 0; v < V; ++v) even[v] = Vec{}, odd[v] = Vec{};
    std::int64_t k = a.rowptr[s];
    const std::int64_t k1 = a.rowptr[s + 1];
    for (; k + 1 < k1; k += 2) {
      prefetch_row<V>(a, std::min(k + kPrefetch, k_last), x, ldx);
      prefetch_row<V>(a, std::min(k + 1 + kPrefetch, k_last), x, ldx);
      const float* x0 = x + static_cast<std::int64_t>(a.col[k]) * ldx;
      const float* x1 = x + static_cast<std::int64_t>(a.col[k + 1]) * ldx;
      const float v0 = a.val[k], v1 = a.val[k + 1];
      for (int v = 0; v < V; ++v) {
        even[v] += v0 * load(x0 + v * kLanes);
        odd[v] += v1 * load(x1 + v * kLanes);
      }
    }
    if (k < k1) {  // an odd count: the last nonzero is at an even offset
      prefetch_row<V>(a, std::min(k + kPrefetch, k_last), x, ldx);
      const float* xr = x + static_cast<std::int64_t>(a.col[k]) * ldx;
      const float vk = a.val[k];
      for (int v = 0; v < V; ++v) even[v] += vk * load(xr + v * kLanes);
    }
    float* yi = y + i * ldy;
    for (int v = 0; v < V; ++v) {
      Vec r = even[v] + odd[v];
      if (beta != 0.f) r = r + beta * load(yi + v * kLanes);
      r = plus_term(i, v, r);
      if (beta == 0.f && aligned) stream(yi + v * kLanes, r);
      else store(yi + v * kLanes, r);
    }
  }
  scale_rows(next_gap, gap1);
}

// Columns [j0, j0 + w) with w < kLanes: a plain loop, in the same order.
void remainder(const Rows& a, std::int64_t s0, std::int64_t s1, std::int64_t gap0, std::int64_t gap1,
               const float* x, std::int64_t ldx, float* y, std::int64_t ldy, float beta, RowAddend t, int w) {
  auto finish = [&](std::int64_t i, const float* even, const float* odd) {
    float* yr = y + i * ldy;
    for (int j = 0; j < w; ++j) {
      float r = even[j] + odd[j];
      if (beta != 0.f) r = r + beta * yr[j];
      yr[j] = t.r ? r + t.c * t.r[i * t.ldr + j] : r;
    }
  };
  const float zero[kLanes] = {};
  const bool gaps_change = beta != 1.f || t.r;  // rows a compressed block skips
  std::int64_t next_gap = gap0;
  for (std::int64_t s = s0; s < s1; ++s) {
    const std::int64_t i = a.out_row(s);
    if (gaps_change)
      for (std::int64_t r = next_gap; r < i; ++r) finish(r, zero, zero);
    next_gap = i + 1;
    float acc[2][kLanes] = {};
    for (std::int64_t k = a.rowptr[s]; k < a.rowptr[s + 1]; ++k) {
      const float* xr = x + static_cast<std::int64_t>(a.col[k]) * ldx;
      const float vk = a.val[k];
      float* chain = acc[(k - a.rowptr[s]) & 1];
      for (int j = 0; j < w; ++j) chain[j] += vk * xr[j];
    }
    finish(i, acc[0], acc[1]);
  }
  if (gaps_change)
    for (std::int64_t r = next_gap; r < gap1; ++r) finish(r, zero, zero);
}

// segment<1> .. segment<kMaxVecs>, indexed by vectors - 1.
using SegmentFn = void (*)(const Rows&, std::int64_t, std::int64_t, std::int64_t, std::int64_t, const float*,
                           std::int64_t, float*, std::int64_t, float, RowAddend);
template <int... V>
constexpr std::array<SegmentFn, kMaxVecs> segments(std::integer_sequence<int, V...>) { return {segment<V + 1>...}; }
constexpr auto kSegments = segments(std::make_integer_sequence<int, kMaxVecs>{});

// Column segments of a width f: full register blocks, then the widest block
// of what is left, then a plain-loop remainder under one vector (vecs = 0).
struct Segment {
  std::int64_t j0;
  int vecs;
};
std::vector<Segment> column_segments(std::int64_t f) {
  std::vector<Segment> segments;
  std::int64_t j0 = 0;
  for (; j0 + kLanes * kMaxVecs <= f; j0 += kLanes * kMaxVecs) segments.push_back({j0, kMaxVecs});
  if (const auto rest_vecs = static_cast<int>((f - j0) / kLanes); rest_vecs > 0) {
    segments.push_back({j0, rest_vecs});
    j0 += rest_vecs * kLanes;
  }
  if (j0 < f) segments.push_back({j0, 0});
  return segments;
}

// Chunk boundaries in stored rows: equal shares of (nonzeros + stored rows).
std::vector<std::int64_t> balanced_chunks(const Rows& a, int chunks) {
  std::vector<std::int64_t> b(static_cast<std::size_t>(chunks) + 1, a.stored);
  b[0] = 0;
  const double total = static_cast<double>(a.nnz + a.stored);
  for (int c = 1; c < chunks; ++c) {
    const double target = total * c / chunks;
    // first s with rowptr[s] + s >= target
    std::int64_t lo = b[c - 1], hi = a.stored;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<double>(a.rowptr[mid] + mid) < target) lo = mid + 1;
      else hi = mid;
    }
    b[c] = lo;
  }
  return b;
}

// --- Per-edge, per-head values (spmm_edge_values)

typedef std::int32_t IVec __attribute__((vector_size(kLanes * sizeof(std::int32_t))));

// The heads of one vector's lanes: each lane's, and their range [first, last]
// (concatenated heads: contiguous).
struct LaneHeads {
  int first = 0, last = 0;
  IVec lane{};
};

// ew::ordered_dot in vectors: its kDotLanes partial sums as one vector of 8,
// and its closing sum ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) by
// shuffles, of four dots at once — the same operations in the same order,
// so the same bits.
static_assert(ew::kDotLanes == 8);
typedef float Lanes __attribute__((vector_size(8 * sizeof(float))));
typedef std::int32_t LaneIndex __attribute__((vector_size(8 * sizeof(std::int32_t))));

// The lanes of Σ_t a[t] b[t] for t < n, n a multiple of 8.
inline Lanes dot_lanes(const float* a, const float* b, std::int64_t n) {
  Lanes acc{};
  for (std::int64_t t = 0; t < n; t += 8) {
    Lanes x, y;
    std::memcpy(&x, a + t, sizeof x);
    std::memcpy(&y, b + t, sizeof y);
    acc += x * y;
  }
  return acc;
}
inline float close_lanes(Lanes a) { return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])); }
inline void close_lanes(Lanes a, Lanes b, Lanes c, Lanes d, float* out) {
  const LaneIndex even{0, 2, 8, 10, 4, 6, 12, 14}, odd{1, 3, 9, 11, 5, 7, 13, 15};
  // [a0+a1, a2+a3, b0+b1, b2+b3, a4+a5, a6+a7, b4+b5, b6+b7], and c, d's
  const Lanes ab = __builtin_shuffle(a, b, even) + __builtin_shuffle(a, b, odd);
  const Lanes cd = __builtin_shuffle(c, d, even) + __builtin_shuffle(c, d, odd);
  // [(a0+a1)+(a2+a3), b.., c.., d.., (a4+a5)+(a6+a7), b.., c.., d..]
  const Lanes s = __builtin_shuffle(ab, cd, even) + __builtin_shuffle(ab, cd, odd);
  for (int h = 0; h < 4; ++h) out[h] = s[h] + s[h + 4];
}

struct EdgeRows {
  Rows rows;
  int heads;
  const float* v;
  const std::int64_t* perm;
  std::int64_t edge(std::int64_t k) const { return perm ? perm[k] : k; }
  const float* values(std::int64_t k) const { return v + edge(k) * heads; }
  // The fused SDDMM (EdgeDots; null: none): head h's local columns [bounds[2h], bounds[2h + 1]).
  const float* z = nullptr;
  std::int64_t ldz = 0;
  float* dots = nullptr;
  const std::int64_t* bounds = nullptr;
  bool by_lanes = false;  // every head's local width a multiple of ew::kDotLanes
  std::int64_t dot_cols() const { return bounds[2 * heads - 1]; }  // the dots read the x row's [0, dot_cols())
  // Through perm, edge k's values (and its dots, to be written) are a random
  // access into the edge tensor: fetched ahead, as the x rows are.
  void prefetch(std::int64_t k, bool with_dots) const {
    const std::int64_t e = perm[k] * heads;
    __builtin_prefetch(v + e);
    if (with_dots) __builtin_prefetch(dots + e, 1);
  }
  // Edge k's dots with the x row xr (from local column 0) and the row's z row zr.
  __attribute__((always_inline)) void dot(std::int64_t k, const float* xr, const float* zr) const {
    float* out = dots + edge(k) * heads;
    const auto lanes = [&](int h) { return dot_lanes(xr + bounds[2 * h], zr + bounds[2 * h], bounds[2 * h + 1] - bounds[2 * h]); };
    if (!by_lanes) {
      for (int h = 0; h < heads; ++h)
        out[h] = ew::ordered_dot(xr + bounds[2 * h], zr + bounds[2 * h], 1, bounds[2 * h + 1] - bounds[2 * h]);
      return;
    }
    int h = 0;
    for (; h + 4 <= heads; h += 4) close_lanes(lanes(h), lanes(h + 1), lanes(h + 2), lanes(h + 3), out + h);
    for (; h < heads; ++h) out[h] = close_lanes(lanes(h));
  }
};

// Edge k's value for each lane's head: one broadcast where the vector lies in
// one head, a select per further head where it spans several (Spans).
template <bool Spans>
inline Vec lane_values(const LaneHeads& l, const float* vk) {
  Vec w = Vec{} + vk[l.first];
  if (Spans)
    for (int h = l.first + 1; h <= l.last; ++h) w = l.lane == h ? Vec{} + vk[h] : w;
  return w;
}

// Y[i, j0 : j0 + kLanes V) of the stored rows [s0, s1): one chain per value, the
// row's edges in storage order (ew::SpmmEdges's order), held in registers.
// Spans: some vector's lanes lie in several heads. Dots: this pass also makes
// the fused SDDMM's dots (x at local column 0), inline: a call per edge cost
// GAT's backward ~7 % (and a runtime flag let it shape the forward's code).
template <int V, bool Spans, bool Dots>
void edge_segment(const EdgeRows& a, std::int64_t s0, std::int64_t s1, const LaneHeads* heads, const float* x,
                  std::int64_t ldx, float* y, std::int64_t ldy) {
  const Rows& r = a.rows;
  const std::int64_t k_last = r.nnz - 1;
  // The x row's lines fetched ahead: the segment's, or with the dots every line they read. The dots
  // read the whole row while the segment's product reads a slice: prefetching only the slice left the
  // dots waiting on the rest of each row (GAT's backward, 4 heads x 32 on AVX2: 35 % of the dots'
  // samples on one load; the row's prefetch made the `sddmm` category ~20 % faster).
  const std::int64_t reach = Dots ? std::max<std::int64_t>(V * kLanes, a.dot_cols()) : V * kLanes;
  for (std::int64_t s = s0; s < s1; ++s) {
    Vec acc[V];
    for (int q = 0; q < V; ++q) acc[q] = Vec{};
    const std::int64_t i = r.out_row(s);
    for (std::int64_t k = r.rowptr[s]; k < r.rowptr[s + 1]; ++k) {
      const float* ahead = x + static_cast<std::int64_t>(r.col[std::min(k + kPrefetch, k_last)]) * ldx;
      for (std::int64_t j = 0; j < reach; j += 16) __builtin_prefetch(ahead + j);  // one per 64-byte line
      if (a.perm) a.prefetch(std::min(k + kPrefetch, k_last), Dots);  // the edge's values (and dots) lie anywhere
      const float* xr = x + static_cast<std::int64_t>(r.col[k]) * ldx;
      const float* vk = a.values(k);
      for (int q = 0; q < V; ++q) acc[q] += lane_values<Spans>(heads[q], vk) * load(xr + q * kLanes);
      if (Dots) a.dot(k, xr, a.z + i * a.ldz);
    }
    float* yi = y + i * ldy;
    for (int q = 0; q < V; ++q) store(yi + q * kLanes, acc[q]);
  }
}

// Columns [j0, j0 + w) with w < kLanes, column j in head head[j]: a plain loop,
// in the same order (`dots`, x_row: as edge_segment's).
void edge_remainder(const EdgeRows& a, std::int64_t s0, std::int64_t s1, const int* head, int w, const float* x,
                    const float* x_row, std::int64_t ldx, float* y, std::int64_t ldy, bool dots) {
  const Rows& r = a.rows;
  for (std::int64_t s = s0; s < s1; ++s) {
    float acc[kLanes] = {};
    const std::int64_t i = r.out_row(s);
    for (std::int64_t k = r.rowptr[s]; k < r.rowptr[s + 1]; ++k) {
      const std::int64_t at = static_cast<std::int64_t>(r.col[k]) * ldx;
      const float* vk = a.values(k);
      for (int j = 0; j < w; ++j) acc[j] += vk[head[j]] * x[at + j];
      if (dots) a.dot(k, x_row + at, a.z + i * a.ldz);
    }
    float* yi = y + i * ldy;
    for (int j = 0; j < w; ++j) yi[j] = acc[j];
  }
}

using EdgeSegmentFn = void (*)(const EdgeRows&, std::int64_t, std::int64_t, const LaneHeads*, const float*,
                               std::int64_t, float*, std::int64_t);
template <bool Spans, bool Dots, int... V>
constexpr std::array<EdgeSegmentFn, kMaxVecs> edge_segments(std::integer_sequence<int, V...>) {
  return {edge_segment<V + 1, Spans, Dots>...};
}
// [spans][dots][vectors - 1]
constexpr std::array<EdgeSegmentFn, kMaxVecs> kEdgeSegments[2][2] = {
    {edge_segments<false, false>(std::make_integer_sequence<int, kMaxVecs>{}),
     edge_segments<false, true>(std::make_integer_sequence<int, kMaxVecs>{})},
    {edge_segments<true, false>(std::make_integer_sequence<int, kMaxVecs>{}),
     edge_segments<true, true>(std::make_integer_sequence<int, kMaxVecs>{})}};

// Whether a walk over `nnz` nonzeros packs X's full segments into the slab (Slab): segment-major, X fits
// it and is large enough (slab_floats), and the passes gather at least twice per X row (the packing reads
// and writes each row's slice once).
bool packs(const Slab& slab, ConstView x, std::int64_t nnz, bool by_row) {
  return !by_row && slab.data && x.rows <= slab.rows && slab_floats(x.rows, x.cols) > 0 && nnz >= 2 * x.rows;
}

// X's columns [j0, j0 + kSlabWidth) of every row side by side into the slab, shared by the team's threads
// (each calls it, inside the parallel region): every thread first done with the slab's previous segment
// (the passes' loops do not wait), and the loop's closing barrier before any thread gathers from it.
void pack_slab(const Slab& slab, ConstView x, std::int64_t j0) {
#pragma omp barrier
#pragma omp for schedule(static)
  for (std::int64_t r = 0; r < x.rows; ++r)
    std::memcpy(slab.data + r * kSlabWidth, x.data + r * x.ld + j0, kSlabWidth * sizeof(float));
}

// Where segment g's pass gathers from: its columns packed into the slab (here, by the team: pack_slab)
// where `pack` and g is a full segment, else X's own; the first column and the rows' stride.
struct Source {
  const float* x;
  std::int64_t ld;
};
Source pass_source(bool pack, const Slab& slab, ConstView x, const Segment& g) {
  if (!pack || g.vecs != kMaxVecs) return {x.data + g.j0, x.ld};
  pack_slab(slab, x, g.j0);
  return {slab.data, kSlabWidth};
}

}  // namespace

void spmm_edge_values(const Csr& a, int heads, ew::HeadSplit hs, const float* v, const std::int64_t* perm,
                      ConstView x, View y, EdgeDots dots, Slab slab) {
  GCNLAB_ASSERT(hs.mean == 0 && a.rows == y.rows && a.cols == x.rows && x.cols == y.cols);
  const std::int64_t f = y.cols;
  EdgeRows rows{{a.rowptr.data(), a.col.data(), nullptr, a.compressed ? a.row_ids.data() : nullptr,
                 a.stored_rows(), a.rows, a.nnz},
                heads, v, perm};
  std::vector<std::int64_t> head_cols;
  if (dots.out) {
    GCNLAB_ASSERT(dots.z.rows == a.rows && dots.z.cols == f);
    rows.by_lanes = true;
    for (int h = 0; h < heads; ++h) {
      head_cols.insert(head_cols.end(), {hs.first(h, f), hs.last(h, f)});
      rows.by_lanes = rows.by_lanes && (hs.last(h, f) - hs.first(h, f)) % ew::kDotLanes == 0;
    }
    rows.z = dots.z.data;
    rows.ldz = dots.z.ld;
    rows.dots = dots.out;
    rows.bounds = head_cols.data();
  }
  if (rows.rows.stored == 0) return;
  const std::int64_t vecs = f / kLanes;
  const int tail = static_cast<int>(f % kLanes);
  std::vector<LaneHeads> lanes(static_cast<std::size_t>(vecs));
  for (std::int64_t q = 0; q < vecs; ++q) {
    LaneHeads& l = lanes[static_cast<std::size_t>(q)];
    for (int j = 0; j < kLanes; ++j) l.lane[j] = hs.head(q * kLanes + j);
    l.first = l.lane[0];
    l.last = l.lane[kLanes - 1];
  }
  const bool spans = std::any_of(lanes.begin(), lanes.end(), [](const LaneHeads& l) { return l.first != l.last; });
  int tail_head[kLanes] = {};
  for (int j = 0; j < tail; ++j) tail_head[j] = hs.head(vecs * kLanes + j);
  const int threads = omp_get_max_threads();
  const int chunks = rows.rows.nnz + rows.rows.stored < 4096 ? 1 : 8 * threads;
  const std::vector<std::int64_t> bounds = balanced_chunks(rows.rows, chunks);

  // spmm's column segments; with the dots and no columns, one empty remainder segment, which makes the dots
  std::vector<Segment> segments = column_segments(f);
  if (rows.dots && segments.empty()) segments.push_back({0, 0});
  // Segment g of the stored rows [s0, s1) from xg, g's first column of x (or of its packed slab), rows ldx
  // apart; the dots on the first segment (never packed: their pass walks by row).
  auto visit = [&](const Segment& g, std::int64_t s0, std::int64_t s1, const float* xg, std::int64_t ldx) {
    const bool dots_here = rows.dots && g.j0 == 0;
    if (g.vecs > 0)
      kEdgeSegments[spans][dots_here][g.vecs - 1](rows, s0, s1, lanes.data() + g.j0 / kLanes, xg, ldx,
                                                  y.data + g.j0, y.ld);
    else
      edge_remainder(rows, s0, s1, tail_head, tail, xg, x.data, ldx, y.data + g.j0, y.ld, dots_here);
  };
  // spmm's walks: segment-major, or row by row through every segment where an x row is 1 KiB or more,
  // and also with the dots: their pass reads each x row whole, so the row's later segments find its x
  // rows in L1/L2, where a segment-major walk would gather them again (GAT's backward on R-MAT 16,
  // 4 heads x 32, AVX2: the `sddmm` category ~12 % faster than chunk by chunk, ~15 % than segment-major).
  const bool by_row = rows.dots || f * static_cast<std::int64_t>(sizeof(float)) >= 1024;
  const bool pack = packs(slab, x, rows.rows.nnz, by_row);
#pragma omp parallel if (chunks > 1)
  for (std::size_t p = 0; p < (by_row ? 1 : segments.size()); ++p) {
    const Segment& g = segments[p];
    const Source src = pass_source(pack, slab, x, g);
#pragma omp for schedule(dynamic, 1) nowait
    for (int c = 0; c < chunks; ++c) {
      const std::int64_t s0 = bounds[c], s1 = bounds[c + 1];
      if (!by_row) {
        visit(g, s0, s1, src.x, src.ld);
      } else {
        for (std::int64_t s = s0; s < s1; ++s)
          for (const Segment& h : segments) visit(h, s, s + 1, x.data + h.j0, x.ld);
      }
    }
  }
}

std::int64_t slab_floats(std::int64_t rows, std::int64_t f) {
  constexpr std::int64_t kMinBytes = std::int64_t{8} << 20;
  const std::int64_t bytes = f * static_cast<std::int64_t>(sizeof(float));
  return f > kSlabWidth && bytes < 1024 && rows * bytes >= kMinBytes ? rows * kSlabWidth : 0;
}

void spmm(const Csr& a, ConstView x, View y, float beta, const std::function<void()>& progress, RowAddend t,
          Slab slab) {
  GCNLAB_ASSERT(a.rows == y.rows && a.cols == x.rows && x.cols == y.cols);
  const std::int64_t f = y.cols;
  if (f == 0 || a.rows == 0) return;
  const Rows rows{a.rowptr.data(), a.col.data(), a.val.data(), a.compressed ? a.row_ids.data() : nullptr,
                  a.stored_rows(), a.rows, a.nnz};
  const std::vector<Segment> segments = column_segments(f);
  const int tail = static_cast<int>(f % kLanes);
  // Segment g of the stored rows [s0, s1) from xg, g's first column of X (or of its packed slab), rows ldx apart.
  auto visit = [&](const Segment& g, std::int64_t s0, std::int64_t s1, std::int64_t gap0, std::int64_t gap1,
                   const float* xg, std::int64_t ldx) {
    const RowAddend term{t.r ? t.r + g.j0 : nullptr, t.ldr, t.c};  // from column j0
    if (g.vecs > 0)
      kSegments[g.vecs - 1](rows, s0, s1, gap0, gap1, xg, ldx, y.data + g.j0, y.ld, beta, term);
    else
      remainder(rows, s0, s1, gap0, gap1, xg, ldx, y.data + g.j0, y.ld, beta, term, tail);
  };
  // The walk. Rows of X under 1 KiB are walked segment by segment, each segment over all the chunks
  // before the next (segment-major): a pass gathers only its segment's columns of X, a slab of
  // n x (segment width) that the last-level cache holds through the whole pass, where a chunk-major walk
  // cycles every segment's slab through the cache chunk after chunk. At 128 features on AVX2 (four
  // segments of 32 floats: R-MAT 17's slab 16 MiB of X's 64, a 32 MiB L3) the SpMM ~10 % faster. A
  // segment's stored rows are re-read per pass; a chunk's did not fit in L2 anyway.
  // Rows of 1 KiB or more (256 floats) are walked one stored row at a time through every segment:
  // each nonzero's X row is then read from its start to its end in consecutive steps (streams the
  // hardware prefetches, a page's translation reused) rather than one segment's piece per pass, each
  // piece on another page. Measured on Cora's 1433 features (AVX2, 45 segments): the SpMM 3.5x faster;
  // R-MAT 14 with 256 and 600 features: 3-30 % faster. Each output value's order is the segment's,
  // whatever the walk: every walk gives the same bits.
  const bool by_row = f * static_cast<std::int64_t>(sizeof(float)) >= 1024;
  const std::size_t passes = by_row ? 1 : segments.size();

  const int threads = omp_get_max_threads();
  // A few chunks per thread absorb uneven cache behaviour; tiny blocks run on one.
  int chunks = rows.nnz + rows.stored < 4096 ? 1 : 8 * threads;
  // Polling for a collective in flight: often enough that its rounds advance
  // (a few hundred microseconds of work between polls), not so often that polls cost:
  // ~kProgressNnz nonzeros of the full width, over a pass's share of it.
  constexpr std::int64_t kProgressNnz = 1 << 14;
  if (progress)
    chunks = static_cast<int>(
        std::clamp<std::int64_t>((rows.nnz + rows.stored) / (kProgressNnz * static_cast<std::int64_t>(passes)), chunks,
                                 1 << 14));
  const std::vector<std::int64_t> bounds = balanced_chunks(rows, chunks);
  const bool pack = packs(slab, x, rows.nnz, by_row);

#pragma omp parallel if (chunks > 1)
  for (std::size_t p = 0; p < passes; ++p) {
    const Segment& g = segments[p];
    const Source src = pass_source(pack, slab, x, g);
    // No barrier between passes: they write disjoint columns of Y.
#pragma omp for schedule(dynamic, 1) nowait
    for (int c = 0; c < chunks; ++c) {
      const std::int64_t s0 = bounds[c], s1 = bounds[c + 1];
      // rows a compressed block skips: from after the previous chunk's last stored row
      // (row 0 for the first chunk) to the last chunk's end (all rows)
      auto gap_before = [&](std::int64_t s) { return s == 0 ? 0 : rows.out_row(s - 1) + 1; };
      const std::int64_t gap0 = gap_before(s0), gap1 = c == chunks - 1 ? rows.rows : gap_before(s1);
      if (s0 == s1 && c != chunks - 1) continue;
      if (!by_row) {
        visit(g, s0, s1, gap0, gap1, src.x, src.ld);
      } else if (s1 - s0 <= 1) {  // an empty last chunk too: its gaps
        for (const Segment& h : segments) visit(h, s0, s1, gap0, gap1, x.data + h.j0, x.ld);
      } else {
        for (std::int64_t s = s0; s < s1; ++s)
          for (const Segment& h : segments)
            visit(h, s, s + 1, s == s0 ? gap0 : gap_before(s), s + 1 == s1 ? gap1 : gap_before(s + 1),
                  x.data + h.j0, x.ld);
      }
      _mm_sfence();  // order the streamed stores before the caller's next step
      if (progress && omp_get_thread_num() == 0) progress();
    }
  }
}

void spmm_row_loop(const Csr& a, ConstView x, View y, float beta) {
  GCNLAB_ASSERT(a.rows == y.rows && a.cols == x.rows && x.cols == y.cols);
  const std::int64_t f = y.cols;
  auto scale = [&](float* yi) {
    for (std::int64_t j = 0; j < f; ++j) yi[j] = beta == 0.f ? 0.f : beta * yi[j];
  };
  if (a.compressed && beta != 1.f) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < a.rows; ++i) scale(y.data + i * y.ld);
  }
  const std::int64_t* rowptr = a.rowptr.data();
  const std::int32_t* col = a.col.data();
  const float* val = a.val.data();
#pragma omp parallel for schedule(dynamic, 32)
  for (std::int64_t s = 0; s < a.stored_rows(); ++s) {
    float* yi = y.data + (a.compressed ? a.row_ids.data()[s] : s) * y.ld;
    if (!a.compressed && beta != 1.f) scale(yi);
    for (std::int64_t k = rowptr[s]; k < rowptr[s + 1]; ++k) {
      const float v = val[k];
      const float* xr = x.data + static_cast<std::int64_t>(col[k]) * x.ld;
#pragma omp simd
      for (std::int64_t j = 0; j < f; ++j) yi[j] += v * xr[j];
    }
  }
}

}  // namespace gcnlab::cpu

#pragma once
// The per-edge math of graph attention (GAT, models/gat), written once as
// functors that the CPU backend runs in OpenMP loops and the CUDA backend
// launches as kernels (as elementwise.hpp). C++17-clean (included by nvcc).
//
// They work on one sparse block of the strategy's Âᵀ pattern (common/matrix/
// csr.hpp: rows are targets i, columns sources j; compressed rows allowed)
// and on edge tensors of it: nnz x H values, edge-major (edge k's heads at
// k*H .. k*H + H-1), in the block's storage order. Per-vertex vectors have H
// values a row: indexed by the block's row i (targets) or column j (sources).
// Every functor handles one stored row s (operator()(s); the row is
// row_of(s)), so a row's sums run in one fixed order and no two threads write
// one value: the results do not depend on the thread count or the schedule.
// A sum over a block's columns (a source's edges) runs on the transposed
// block, reading the forward block's edge tensor through `perm` (perm[k]: the
// forward position of the transposed block's edge k).
//
// In GAT's terms (Veličković et al. ICLR'18 Eq. 1-4, PyG 2.3.1 GATConv):
//   EdgeScores          e_ij = LeakyReLU(src_j + dst_i)
//   EdgeRowMax          m_i = max_j e_ij                (per block; combined over the ranks that split row i)
//   EdgeExpRowSum       e_ij <- exp(e_ij - m_i),  S_i = Σ_j e_ij
//   EdgeScaleRows       α_ij = e_ij / S_i
//   EdgeSoftmax         the four above on one row in one visit (rows held whole)
//   EdgeDropout         β_ij = dropout(α_ij), keyed by (target id, source id, head)
//   SpmmEdges           Y_i = Σ_j v_ij X_j per head (v: β forward; βᵀ through perm backward)
//   SpmmEdgesMean       Y_i = mean_h Σ_j v_ij,h Z_j,h      (averaged heads, forward)
//   SpmmEdgesSpread     Y_j,h = Σ_i v_ij,h G_i / H          (averaged heads, backward)
//   Sddmm               dβ_ij = G_i · Z_j per head  (this rank's columns: a partial dot)
//   SddmmMean           dβ_ij,h = G_i · Z_j,h / H            (averaged heads)
//   EdgeRowDot          D_i = Σ_j α_ij dα_ij
//   EdgeSoftmaxBackward dê_ij = α_ij (dα_ij - D_i) · LeakyReLU'(src_j + dst_i)
//   EdgeRowSums         out_i = Σ_j v_ij (dd_i; ds_j on the transposed block)
//   EdgeSoftmaxGrad     EdgeRowDot, EdgeSoftmaxBackward, dd's EdgeRowSums on one row (rows held whole)

#include <cmath>
#include <cstdint>

#include "common/backend/elementwise.hpp"
#include "common/core/hd.hpp"
#include "common/core/rng.hpp"

namespace gcnlab::ew {

// A block's structure as the functors read it.
struct EdgeBlock {
  const std::int64_t* rowptr;  // stored rows + 1 offsets
  const std::int32_t* ids;     // compressed rows: the row of each stored row (null: every row stored)
  const std::int32_t* col;
  int heads;
  GCNLAB_HD std::int64_t row_of(std::int64_t s) const { return ids ? ids[s] : s; }
  GCNLAB_HD std::int64_t begin(std::int64_t s) const { return rowptr[s]; }
  GCNLAB_HD std::int64_t end(std::int64_t s) const { return rowptr[s + 1]; }
};

// Which head a local column of Z belongs to. Concatenated heads (mean = 0):
// heads of `width` columns, the local columns starting at global column col0
// (a rank may hold part of a head), and the output's columns are Z's.
// Averaged heads (mean = H > 1, PyG's GATConv(concat=False)): Z is class-major
// — column c·H + h is head h of output column c — and a rank holding output
// columns F holds all their heads (Z's local columns [col0, col0 + |F| H),
// col0 = H min F); output column c is the mean over h (SpmmEdgesMean,
// SpmmEdgesSpread, SddmmMean).
struct HeadSplit {
  std::int64_t col0, width;
  int mean = 0;
  // Local columns [first(h), last(h)) of head h among `cols`.
  GCNLAB_HD std::int64_t first(int h, std::int64_t cols) const {
    const std::int64_t c = h * width - col0;
    return c < 0 ? 0 : (c > cols ? cols : c);
  }
  GCNLAB_HD std::int64_t last(int h, std::int64_t cols) const {
    const std::int64_t c = (h + 1) * width - col0;
    return c < 0 ? 0 : (c > cols ? cols : c);
  }
  GCNLAB_HD int head(std::int64_t c) const {
    return static_cast<int>(mean ? (col0 + c) % mean : (col0 + c) / width);
  }
  // Head h's local columns among `cols`: `count` of them from `first`, `step` apart
  // (concatenated heads: a range; averaged: every H-th, class-major).
  struct Columns { std::int64_t first, step, count; };
  GCNLAB_HD Columns columns(int h, std::int64_t cols) const {
    if (!mean) return {first(h, cols), 1, last(h, cols) - first(h, cols)};
    const std::int64_t c = ((h - col0) % mean + mean) % mean;
    return {c, mean, c < cols ? (cols - c + mean - 1) / mean : 0};
  }
};

GCNLAB_HD float leaky_relu(float v, float slope) { return v > 0.f ? v : slope * v; }

// Σ_t a[t] b[t·stride] for t < n in one order on every target (docs/design.md,
// reproducibility): kDotLanes partial sums, term t into lane t mod kDotLanes,
// each lane in order, then the lanes added pairwise ((0+1)+(2+3))+((4+5)+(6+7)).
// The compiler vectorises the lanes (one AVX2 register) but cannot choose the
// order, as it does for OpenMP's `simd reduction`, whose partial sums follow
// the target's vector width: such a sum gave other bits on AVX2 than on
// AVX-512 (issue 61).
constexpr int kDotLanes = 8;
// Also Σ_t a[t·sa] b[t·sb] (ordered_dot_strided), in the same order.
GCNLAB_HD float ordered_dot_strided(const float* a, std::int64_t sa, const float* b, std::int64_t sb, std::int64_t n) {
  float lane[kDotLanes] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  std::int64_t t = 0;
  for (; t + kDotLanes <= n; t += kDotLanes)
    for (int l = 0; l < kDotLanes; ++l) lane[l] += a[(t + l) * sa] * b[(t + l) * sb];
  for (int l = 0; t + l < n; ++l) lane[l] += a[(t + l) * sa] * b[(t + l) * sb];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}
GCNLAB_HD float ordered_dot(const float* a, const float* b, std::int64_t stride, std::int64_t n) {
  return ordered_dot_strided(a, 1, b, stride, n);
}

// A row reduction per head with its accumulators in registers: the heads in
// groups of up to kHeadGroup, each head's value folded over the row's edges in
// storage order, acc = step(acc, k, h) from `init`, then stored to out[h] —
// the operations and order of an accumulator kept in out itself, so the same
// bits. In memory (out may alias the edge tensor, as far as the compiler
// knows) every edge's update waited on the previous edge's store: the row max
// alone was 29 % of the forward softmax's row visit (perf annotate, R-MAT 16,
// 4 heads).
constexpr int kHeadGroup = 8;
// The heads of the group from h0: kHeadGroup, or the rest.
GCNLAB_HD int head_group(int heads, int h0) { return heads - h0 < kHeadGroup ? heads - h0 : kHeadGroup; }
template <class Step>
GCNLAB_HD_INLINE void fold_row_heads(const EdgeBlock& b, std::int64_t s, float init, float* out, const Step& step) {
  const int H = b.heads;
  for (int h0 = 0; h0 < H; h0 += kHeadGroup) {
    const int n = head_group(H, h0);
    float acc[kHeadGroup];
    for (int h = 0; h < n; ++h) acc[h] = init;
    for (std::int64_t k = b.begin(s); k < b.end(s); ++k)
      for (int h = 0; h < n; ++h) acc[h] = step(acc[h], k, h0 + h);
    for (int h = 0; h < n; ++h) out[h0 + h] = acc[h];
  }
}

// The CPU row forms' gather of a per-vertex array (n x heads: the attention's
// source halves) for the edge kAhead on in the row, fetched ahead: a hub row's
// edges reach every vertex, beyond the L2 (none on CUDA, whose warps run the
// element methods).
GCNLAB_HD_INLINE void prefetch_source(const EdgeBlock& b, std::int64_t k, std::int64_t end, const float* v) {
#if !defined(__CUDA_ARCH__)
  constexpr std::int64_t kAhead = 16;
  if (k + kAhead < end) __builtin_prefetch(v + static_cast<std::int64_t>(b.col[k + kAhead]) * b.heads);
#endif
}

// Each functor's per-edge math is one element method (edge k of row i, head
// h), which its row form loops over and the CUDA backend's warp kernels
// (backends/cuda/kernels.cu: a warp per row, its lanes over the row's edges
// and heads) call directly.
struct EdgeScores {
  EdgeBlock b; const float* src; const float* dst; float slope; float* e;
  GCNLAB_HD void at(std::int64_t i, std::int64_t k, int h) const {
    const int H = b.heads;
    e[k * H + h] = leaky_relu(src[static_cast<std::int64_t>(b.col[k]) * H + h] + dst[i * H + h], slope);
  }
  GCNLAB_HD_INLINE void operator()(std::int64_t s) const {
    const std::int64_t i = b.row_of(s);
    for (std::int64_t k = b.begin(s); k < b.end(s); ++k) {
      prefetch_source(b, k, b.end(s), src);
      for (int h = 0; h < b.heads; ++h) at(i, k, h);
    }
  }
};

// max must hold -inf in rows the block does not store.
struct EdgeRowMax {
  EdgeBlock b; const float* e; float* max;
  GCNLAB_HD_INLINE void operator()(std::int64_t s) const {
    const int H = b.heads;
    fold_row_heads(b, s, -INFINITY, max + b.row_of(s) * H, [&](float m, std::int64_t k, int h) {
      const float v = e[k * H + h];
      return v > m ? v : m;  // inline (fmaxf: a libm call)
    });
  }
};

// sum must hold 0 in rows the block does not store.
struct EdgeExpRowSum {
  EdgeBlock b; const float* max; float* e; float* sum;
  // e_ij <- exp(e_ij - m_i), returned (the term of S_i)
  GCNLAB_HD float at(std::int64_t i, std::int64_t k, int h) const {
    const int H = b.heads;
    const float v = softmax_exp(e[k * H + h] - max[i * H + h]);
    e[k * H + h] = v;
    return v;
  }
  // The row form: the exps first, in one loop over the row's edge-head values
  // that vectorises (a per-term call with the sum's dependence between them
  // did not: 13 % of a GAT epoch), then each head's sum in edge order, as
  // at()'s callers add them: the same bits.
  GCNLAB_HD_INLINE void operator()(std::int64_t s) const {
    const int H = b.heads;
    const std::int64_t i = b.row_of(s);
    float* row = e + b.begin(s) * H;
    const std::int64_t values = (b.end(s) - b.begin(s)) * H;
    const float* m = max + i * H;
    std::int64_t t = 0;
    if (kExpBlock % H == 0) {  // a block of values starts at head 0: the maxes as one repeating block
      float mb[kExpBlock];
      for (int j = 0; j < kExpBlock; ++j) mb[j] = m[j % H];
      for (; t + kExpBlock <= values; t += kExpBlock)
        for (int j = 0; j < kExpBlock; ++j) row[t + j] = softmax_exp(row[t + j] - mb[j]);
    }
    for (; t < values; ++t) row[t] = softmax_exp(row[t] - m[t % H]);
    fold_row_heads(b, s, 0.f, sum + i * H, [&](float a, std::int64_t k, int h) { return a + e[k * H + h]; });
  }
  static constexpr int kExpBlock = 16;
};

struct EdgeScaleRows {
  EdgeBlock b; const float* sum; float* e;
  GCNLAB_HD void at(std::int64_t i, std::int64_t k, int h) const { e[k * b.heads + h] /= sum[i * b.heads + h]; }
  // The row's sums read once into registers (through `sum`, which may alias e as far as the
  // compiler knows, they were reloaded for every value, and the divisions ran one at a time).
  GCNLAB_HD_INLINE void operator()(std::int64_t s) const {
    const int H = b.heads;
    const float* row_sum = sum + b.row_of(s) * H;
    for (int h0 = 0; h0 < H; h0 += kHeadGroup) {
      const int n = head_group(H, h0);
      float d[kHeadGroup];
      for (int h = 0; h < n; ++h) d[h] = row_sum[h0 + h];
      for (std::int64_t k = b.begin(s); k < b.end(s); ++k)
        for (int h = 0; h < n; ++h) e[k * H + h0 + h] /= d[h];
    }
  }
};

// α_ij = softmax_j LeakyReLU(src_j + dst_i) of one row in one visit, for a
// block that holds its rows whole (no other rank's max or sum to combine):
// the four passes above on the row in turn, its edge-head values in cache
// between them instead of four walks over the whole tensor. The same
// operations in the same order: the same bits as the passes. max and sum
// receive the row's.
struct EdgeSoftmax {
  EdgeBlock b; const float* src; const float* dst; float slope; float* e; float* max; float* sum;
  GCNLAB_HD_INLINE void operator()(std::int64_t s) const {
    EdgeScores{b, src, dst, slope, e}(s);
    EdgeRowMax{b, e, max}(s);
    EdgeExpRowSum{b, max, e, sum}(s);
    EdgeScaleRows{b, sum, e}(s);
  }
};

// out = dropout(in) on a forward block: edge j -> i, head h is kept iff
// uniform(seed, stream, id(i), id(j) * H + h) >= p (the vertices' global ids:
// the same mask on every strategy and grid), then scaled by 1 / (1 - p).
// Also the backward (dα = mask · scale · dβ): the same call on dβ.
struct EdgeDropout {
  EdgeBlock b; const float* in; float* out;
  const std::int64_t* row_ids; const std::int64_t* col_ids;
  std::uint64_t seed, stream; float p, scale;
  GCNLAB_HD std::uint64_t key(std::int64_t i) const {
    return rng::row_key(seed, stream, static_cast<std::uint64_t>(row_ids[i]));
  }
  GCNLAB_HD void at(std::uint64_t row_key, std::int64_t k, int h) const {
    const int H = b.heads;
    const std::uint64_t source = static_cast<std::uint64_t>(col_ids[b.col[k]]) * static_cast<std::uint64_t>(H);
    const float v = in[k * H + h];
    out[k * H + h] = rng::uniform_in_row(row_key, source + static_cast<std::uint64_t>(h)) >= p ? v * scale : 0.f;
  }
  GCNLAB_HD void operator()(std::int64_t s) const {
    const std::uint64_t row_key = key(b.row_of(s));
    for (std::int64_t k = b.begin(s); k < b.end(s); ++k)
      for (int h = 0; h < b.heads; ++h) at(row_key, k, h);
  }
};

// The operands of an SpMM with per-edge, per-head values v on a block (read
// through perm when it is set: the transposed block's edge k is the forward
// block's perm[k]): Y = V X; `cols`: the columns on the layer output's side
// (Y's; G's, X, for SpmmEdgesSpread).
struct EdgeSpmm {
  EdgeBlock b; const float* v; const std::int64_t* perm; HeadSplit hs;
  const float* x; std::int64_t ldx; float* y; std::int64_t ldy; std::int64_t cols;
  GCNLAB_HD std::int64_t at(std::int64_t k) const { return perm ? perm[k] : k; }
  GCNLAB_HD const float* values(std::int64_t k) const { return v + at(k) * b.heads; }  // edge k's, per head
  GCNLAB_HD const float* x_row(std::int64_t k) const { return x + static_cast<std::int64_t>(b.col[k]) * ldx; }
  // Y's row of stored row s, its first n values zeroed.
  GCNLAB_HD float* zeroed_row(std::int64_t s, std::int64_t n) const {
    float* r = y + b.row_of(s) * ldy;
    for (std::int64_t c = 0; c < n; ++c) r[c] = 0.f;
    return r;
  }
};

// Y_i = Σ_k v[k, head(c)] X_{col k} over the row's edges, each local column c
// in its head's value (v through perm when perm is set). Rows the block does
// not store: the caller zeroes them. The row form (CPU) walks the edges once,
// the element form (CUDA: one thread per stored row and column) the column's.
struct SpmmEdges : EdgeSpmm {
  GCNLAB_HD void operator()(std::int64_t s) const {
    float* yr = zeroed_row(s, cols);
    for (std::int64_t k = b.begin(s); k < b.end(s); ++k) {
      const float *xr = x_row(k), *vk = values(k);
      for (int h = 0; h < b.heads; ++h) {
        const float w = vk[h];
        const std::int64_t c1 = hs.last(h, cols);
        for (std::int64_t c = hs.first(h, cols); c < c1; ++c) yr[c] += w * xr[c];
      }
    }
  }
  GCNLAB_HD void operator()(std::int64_t s, std::int64_t c) const {
    const int h = hs.head(c);
    float acc = 0.f;
    for (std::int64_t k = b.begin(s); k < b.end(s); ++k) acc += values(k)[h] * x_row(k)[c];
    y[b.row_of(s) * ldy + c] = acc;
  }
};

// Averaged heads (HeadSplit::mean = H): x is Z (class-major, cols H columns),
// y the output (cols): Y_i[c] = (Σ_k Σ_h v[k, h] X_{col k}[c H + h]) / H.
// Row form (CPU) and element form (CUDA), as SpmmEdges.
struct SpmmEdgesMean : EdgeSpmm {
  GCNLAB_HD void operator()(std::int64_t s) const {
    const int H = b.heads;
    float* yr = zeroed_row(s, cols);
    for (std::int64_t k = b.begin(s); k < b.end(s); ++k) {
      const float *xr = x_row(k), *vk = values(k);
      for (std::int64_t c = 0; c < cols; ++c) {
        float acc = 0.f;
        for (int h = 0; h < H; ++h) acc += vk[h] * xr[c * H + h];
        yr[c] += acc;
      }
    }
    for (std::int64_t c = 0; c < cols; ++c) yr[c] /= static_cast<float>(H);
  }
  GCNLAB_HD void operator()(std::int64_t s, std::int64_t c) const {
    const int H = b.heads;
    float sum = 0.f;
    for (std::int64_t k = b.begin(s); k < b.end(s); ++k) {
      const float *xr = x_row(k), *vk = values(k);
      float acc = 0.f;
      for (int h = 0; h < H; ++h) acc += vk[h] * xr[c * H + h];
      sum += acc;
    }
    y[b.row_of(s) * ldy + c] = sum / static_cast<float>(H);
  }
};

// SpmmEdgesMean's adjoint (the backward's βᵀ G): x is G (cols), y is dZ
// (class-major, cols H columns): Y_j[c H + h] = (Σ_k v[k, h] X_{col k}[c]) / H.
// The element form runs one thread per stored row and column of Y.
struct SpmmEdgesSpread : EdgeSpmm {
  GCNLAB_HD void operator()(std::int64_t s) const {
    const int H = b.heads;
    float* yr = zeroed_row(s, cols * H);
    for (std::int64_t k = b.begin(s); k < b.end(s); ++k) {
      const float *xr = x_row(k), *vk = values(k);
      for (std::int64_t c = 0; c < cols; ++c)
        for (int h = 0; h < H; ++h) yr[c * H + h] += vk[h] * xr[c];
    }
    for (std::int64_t c = 0; c < cols * H; ++c) yr[c] /= static_cast<float>(H);
  }
  GCNLAB_HD void operator()(std::int64_t s, std::int64_t zc) const {
    const int H = b.heads;
    const std::int64_t c = zc / H;
    const int h = static_cast<int>(zc % H);
    float acc = 0.f;
    for (std::int64_t k = b.begin(s); k < b.end(s); ++k) acc += values(k)[h] * x_row(k)[c];
    y[b.row_of(s) * ldy + zc] = acc / static_cast<float>(H);
  }
};

// The operands of an SDDMM on a block: out[k, h] from the rows G_i and Z_j of
// edge k (j -> i), `cols`: G's columns.
struct EdgeSddmm {
  EdgeBlock b; HeadSplit hs; const float* g; std::int64_t ldg; const float* z; std::int64_t ldz; std::int64_t cols;
  float* out;
  GCNLAB_HD const float* z_row(std::int64_t k) const { return z + static_cast<std::int64_t>(b.col[k]) * ldz; }
};

// out[k, h] = Σ_{c in head h} G_i[c] Z_j[c] over the local columns (a partial
// dot where a rank holds part of a head's columns).
struct Sddmm : EdgeSddmm {
  GCNLAB_HD void at(std::int64_t i, std::int64_t k, int h) const {
    const std::int64_t c0 = hs.first(h, cols), c1 = hs.last(h, cols);
    out[k * b.heads + h] = ordered_dot(g + i * ldg + c0, z_row(k) + c0, 1, c1 - c0);
  }
  GCNLAB_HD void operator()(std::int64_t s) const {
    const std::int64_t i = b.row_of(s);
    for (std::int64_t k = b.begin(s); k < b.end(s); ++k)
      for (int h = 0; h < b.heads; ++h) at(i, k, h);
  }
};

// Averaged heads (HeadSplit::mean = H): G has `cols` columns, Z cols H
// (class-major): out[k, h] = (Σ_c G_i[c] Z_j[c H + h]) / H, the SDDMM of the
// mean (dβ of SpmmEdgesMean's product).
struct SddmmMean : EdgeSddmm {
  GCNLAB_HD void at(std::int64_t i, std::int64_t k, int h) const {
    const int H = b.heads;
    out[k * H + h] = ordered_dot(g + i * ldg, z_row(k) + h, H, cols) / static_cast<float>(H);
  }
  GCNLAB_HD void operator()(std::int64_t s) const {
    const std::int64_t i = b.row_of(s);
    for (std::int64_t k = b.begin(s); k < b.end(s); ++k)
      for (int h = 0; h < b.heads; ++h) at(i, k, h);
  }
};

// out_i = Σ_k x[k] y[k] per head (out zeroed by the caller in rows not stored).
struct EdgeRowDot {
  EdgeBlock b; const float* x; const float* y; float* out;
  GCNLAB_HD float term(std::int64_t k, int h) const { return x[k * b.heads + h] * y[k * b.heads + h]; }
  GCNLAB_HD_INLINE void operator()(std::int64_t s) const {
    fold_row_heads(b, s, 0.f, out + b.row_of(s) * b.heads, [&](float a, std::int64_t k, int h) { return a + term(k, h); });
  }
};

// d: dα in, dê out. LeakyReLU' as PyTorch's: 1 where its input > 0, else the slope.
struct EdgeSoftmaxBackward {
  EdgeBlock b; const float* alpha; const float* rowdot; const float* src; const float* dst; float slope; float* d;
  // dê from LeakyReLU's input pre, α, dα and D_i.
  GCNLAB_HD float grad(float pre, float a, float da, float row_dot) const {
    const float de = a * (da - row_dot);
    return pre > 0.f ? de : slope * de;
  }
  GCNLAB_HD void at(std::int64_t i, std::int64_t k, int h) const {
    const int H = b.heads;
    const float pre = src[static_cast<std::int64_t>(b.col[k]) * H + h] + dst[i * H + h];
    d[k * H + h] = grad(pre, alpha[k * H + h], d[k * H + h], rowdot[i * H + h]);
  }
  // at() over the row, its D_i and dst_i read once into registers (as EdgeScaleRows' sums).
  GCNLAB_HD_INLINE void operator()(std::int64_t s) const {
    const int H = b.heads;
    const std::int64_t i = b.row_of(s);
    for (int h0 = 0; h0 < H; h0 += kHeadGroup) {
      const int n = head_group(H, h0);
      float row_dot[kHeadGroup], row_dst[kHeadGroup];
      for (int h = 0; h < n; ++h) row_dot[h] = rowdot[i * H + h0 + h], row_dst[h] = dst[i * H + h0 + h];
      for (std::int64_t k = b.begin(s); k < b.end(s); ++k) {
        if (h0 == 0) prefetch_source(b, k, b.end(s), src);
        const float* src_j = src + static_cast<std::int64_t>(b.col[k]) * H + h0;
        for (int h = 0; h < n; ++h) {
          const std::int64_t v = k * H + h0 + h;
          d[v] = grad(src_j[h] + row_dst[h], alpha[v], d[v], row_dot[h]);
        }
      }
    }
  }
};

// out_i = Σ_k v[perm ? perm[k] : k] per head (out zeroed by the caller in rows not stored).
struct EdgeRowSums {
  EdgeBlock b; const float* v; const std::int64_t* perm; float* out;
  GCNLAB_HD float term(std::int64_t k, int h) const { return v[(perm ? perm[k] : k) * b.heads + h]; }
  GCNLAB_HD_INLINE void operator()(std::int64_t s) const {
    fold_row_heads(b, s, 0.f, out + b.row_of(s) * b.heads, [&](float a, std::int64_t k, int h) { return a + term(k, h); });
  }
};

// The softmax's backward of one row in one visit, for a block that holds its
// rows whole: EdgeRowDot (D_i = Σ_j α_ij dα_ij), EdgeSoftmaxBackward and
// EdgeRowSums (dd_i = Σ_j dê_ij) on the row in turn; the same bits as the
// three passes. d: dα in, dê out.
struct EdgeSoftmaxGrad {
  EdgeBlock b; const float* alpha; const float* src; const float* dst; float slope; float* d; float* rowdot;
  float* dd;
  GCNLAB_HD_INLINE void operator()(std::int64_t s) const {
    EdgeRowDot{b, alpha, d, rowdot}(s);
    EdgeSoftmaxBackward{b, alpha, rowdot, src, dst, slope, d}(s);
    EdgeRowSums{b, d, nullptr, dd}(s);
  }
};

// The attention's per-vertex halves (GAT Eq. 3: a_srcᵀ W h_j and a_dstᵀ W h_i):
// s_j,h = Σ_{c in head h} a_src[c] Z_j[c] and d_j,h likewise with a_dst, over
// this rank's columns of Z (a partial dot where a rank holds part of a head),
// in ordered_dot's order, in one read of Z (two skinny GEMMs with the heads'
// block-diagonal matrices read it twice and packed it for each). Row form
// (CPU) and element form (CUDA: one thread per row and head).
struct HeadDots {
  const float* z; std::int64_t ldz, cols; const float* a_src; const float* a_dst; HeadSplit hs; int heads;
  float* s; float* d;
  GCNLAB_HD void operator()(std::int64_t j, std::int64_t h) const {
    const HeadSplit::Columns c = hs.columns(static_cast<int>(h), cols);
    const float* zj = z + j * ldz + c.first;
    s[j * heads + h] = ordered_dot_strided(zj, c.step, a_src + c.first, c.step, c.count);
    d[j * heads + h] = ordered_dot_strided(zj, c.step, a_dst + c.first, c.step, c.count);
  }
  GCNLAB_HD void operator()(std::int64_t j) const {
    for (int h = 0; h < heads; ++h) (*this)(j, h);
  }
};

// HeadDots' adjoint, added to dZ: dZ_j[c] = (dZ_j[c] + ds_j,head(c) a_src[c]) +
// dd_j,head(c) a_dst[c]. Row form (CPU) and element form (CUDA), the same bits.
struct HeadDotsAdjoint {
  const float* ds; const float* dd; int heads; const float* a_src; const float* a_dst; HeadSplit hs;
  float* dz; std::int64_t ld;
  GCNLAB_HD void at(std::int64_t j, std::int64_t c, int h) const {
    float& y = dz[j * ld + c];
    y = (y + ds[j * heads + h] * a_src[c]) + dd[j * heads + h] * a_dst[c];
  }
  GCNLAB_HD void operator()(std::int64_t j, std::int64_t c) const { at(j, c, hs.head(c)); }
  GCNLAB_HD void row(std::int64_t j, std::int64_t cols) const {
    for (int h = 0; h < heads; ++h) {
      const HeadSplit::Columns k = hs.columns(h, cols);
      for (std::int64_t t = 0; t < k.count; ++t) at(j, k.first + t * k.step, h);
    }
  }
};

// The attention vectors' gradient (GAT, HeadDots' adjoint for a): out[c] = Σ_j e_j,head(c) Z_j[c]
// over the rank's rows (e = ds for a_src, dd for a_dst: rows x heads), a column
// reduction of Z: each product exact in double, summed in double by the backend's
// fixed blocks of rows (as ColumnSums). It replaces the GEMM eᵀZ (heads x columns),
// of which only the diagonal blocks were kept.
struct HeadColumnDots {
  const float* e; std::int64_t lde; const float* z; std::int64_t ldz; HeadSplit hs; std::int64_t rows; float* out;
  GCNLAB_HD double term(std::int64_t i, std::int64_t c) const {
    return static_cast<double>(e[i * lde + hs.head(c)]) * static_cast<double>(z[i * ldz + c]);
  }
};

}  // namespace gcnlab::ew

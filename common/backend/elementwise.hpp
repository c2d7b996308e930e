#pragma once
// The element-wise math of the model, written once. Each functor computes one
// element (or one row) from indices; the CPU backend runs them in OpenMP
// loops, the CUDA backend launches the same functors as kernels, so the GPU
// path's math is exercised by the CPU tests. C++17-clean (included by nvcc).

#include <cmath>
#include <cstdint>

#include "common/core/bf16.hpp"
#include "common/core/hd.hpp"
#include "common/core/rng.hpp"

namespace gcnlab::ew {

// Split codes of a vertex (one byte per row).
enum Split : std::uint8_t { kNone = 0, kTrain = 1, kVal = 2, kTest = 3 };

struct Fill {
  float* y; std::int64_t ld; float value;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { y[i * ld + j] = value; }
};

struct Copy {
  const float* x; std::int64_t ldx; float* y; std::int64_t ldy;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { y[i * ldy + j] = x[i * ldx + j]; }
};

// y = xᵀ (iterated over y's elements).
struct Transpose {
  const float* x; std::int64_t ldx; float* y; std::int64_t ldy;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { y[i * ldy + j] = x[j * ldx + i]; }
};

// out[i] = x[rows[i]]: packs the rows a peer needs into a contiguous send buffer.
struct GatherRows {
  const float* x; std::int64_t ldx; const std::int64_t* rows; float* out; std::int64_t ldo;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { out[i * ldo + j] = x[rows[i] * ldx + j]; }
};

// BF16 wire format (ScaleGNN Sec. V-B): x (rows x cols, fp32) packed row-major
// into a contiguous bf16 array, and back.
struct PackBf16 {
  const float* x; std::int64_t ldx; bf16* out; std::int64_t cols;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { out[i * cols + j] = to_bf16(x[i * ldx + j]); }
};
struct UnpackBf16 {
  const bf16* in; std::int64_t cols; float* y; std::int64_t ldy;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { y[i * ldy + j] = to_float(in[i * cols + j]); }
};

// H = ReLU(Z)
struct Relu {
  const float* z; std::int64_t ldz; float* h; std::int64_t ldh;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const {
    const float v = z[i * ldz + j];
    h[i * ldh + j] = v > 0.f ? v : 0.f;
  }
};

// H = ReLU(Z + R + 1 bᵀ) in one pass (R with kAddend: a model's addend,
// GraphSAGE's root term; b a layer's bias), Z left as it is: the backward
// reads H (or dropout's X) for ReLU', as H > 0 exactly where its argument is
// (H may be Z: the shared plan's in-place ReLU). The sums round as the
// separate passes did: z + r as axpy's z + 1 · r, then + b[j] as the rank-1
// product Z += 1 bᵀ (1 · b[j] is exact). kAddend is a template parameter so
// that neither form tests for R per element (the loops vectorise).
template <bool kAddend>
struct BiasSum {
  const float* z; std::int64_t ldz; const float* r; std::int64_t ldr; const float* b;
  GCNLAB_HD float operator()(std::int64_t i, std::int64_t j) const {
    if constexpr (kAddend) return (z[i * ldz + j] + r[i * ldr + j]) + b[j];
    else return z[i * ldz + j] + b[j];
  }
};
template <bool kAddend>
struct BiasRelu {
  BiasSum<kAddend> sum; float* h; std::int64_t ldh;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const {
    const float v = sum(i, j);
    h[i * ldh + j] = v > 0.f ? v : 0.f;
  }
};

// Y += 1 bᵀ (a bias on a layer without an activation after it: the logits).
struct AddRow {
  const float* b; float* y; std::int64_t ldy;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { y[i * ldy + j] += b[j]; }
};

// G = dH * ReLU'(Z). Both operands are loaded unconditionally: a load under
// the condition would keep the compiler from vectorising the loop.
struct ReluBackward {
  const float* dh; std::int64_t lddh; const float* z; std::int64_t ldz; float* g; std::int64_t ldg;
  GCNLAB_HD float value(std::int64_t i, std::int64_t j) const {
    const float d = dh[i * lddh + j], v = z[i * ldz + j];
    return v > 0.f ? d : 0.f;
  }
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { g[i * ldg + j] = value(i, j); }
};

// Inverted dropout with a P-independent mask: element (v, c) of the global
// matrix is kept iff uniform(seed, stream, v, c) >= p. `row_ids` maps local
// rows to global (original) vertex ids, `col0` is the first global column.
// Element functors with a row form as well: row(i, cols) draws the row's key
// once (one mix per element instead of four); the CPU backend runs rows, the
// CUDA backend elements; both give the same mask.
struct Dropout {
  const float* x; std::int64_t ldx; float* y; std::int64_t ldy;
  const std::int64_t* row_ids; std::int64_t col0;
  std::uint64_t seed, stream; float p, scale;
  GCNLAB_HD float apply(std::uint64_t key, std::int64_t j, float v) const {
    return rng::uniform_in_row(key, static_cast<std::uint64_t>(col0 + j)) >= p ? v * scale : 0.f;
  }
  GCNLAB_HD std::uint64_t key(std::int64_t i) const {
    return rng::row_key(seed, stream, static_cast<std::uint64_t>(row_ids[i]));
  }
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { y[i * ldy + j] = apply(key(i), j, x[i * ldx + j]); }
  GCNLAB_HD void row(std::int64_t i, std::int64_t cols) const {
    const std::uint64_t k = key(i);
    for (std::int64_t j = 0; j < cols; ++j) y[i * ldy + j] = apply(k, j, x[i * ldx + j]);
  }
};

// X = dropout(ReLU(Z)) in one pass (the next layer's input; H = ReLU(Z) is not
// stored during training). Same mask as Dropout.
struct ReluDropout {
  Dropout d;  // d.x is Z
  GCNLAB_HD static float relu(float v) { return v > 0.f ? v : 0.f; }
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const {
    d.y[i * d.ldy + j] = d.apply(d.key(i), j, relu(d.x[i * d.ldx + j]));
  }
  GCNLAB_HD void row(std::int64_t i, std::int64_t cols) const {
    const std::uint64_t k = d.key(i);
    for (std::int64_t j = 0; j < cols; ++j) d.y[i * d.ldy + j] = d.apply(k, j, relu(d.x[i * d.ldx + j]));
  }
};

// X = dropout(ReLU(Z + R + 1 bᵀ)) in one pass (BiasRelu's sums, ReluDropout's mask).
template <bool kAddend>
struct BiasReluDropout {
  Dropout d;  // d.y is X; d.x is unused
  BiasSum<kAddend> sum;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const {
    d.y[i * d.ldy + j] = d.apply(d.key(i), j, ReluDropout::relu(sum(i, j)));
  }
  GCNLAB_HD void row(std::int64_t i, std::int64_t cols) const {
    const std::uint64_t k = d.key(i);
    for (std::int64_t j = 0; j < cols; ++j) d.y[i * d.ldy + j] = d.apply(k, j, ReluDropout::relu(sum(i, j)));
  }
};

// exp of the softmax's shifted logits (z - max <= 0). The device calls expf;
// the host evaluates Cephes' expf polynomial (relative error < 2e-7 on its
// range) branch-free, so the class loops vectorise where glibc's expf is one
// scalar call per element (26 of a 737 ms epoch at 2 threads, issue 12).
// Arguments below -87.3 give about 1.2e-38, not 0; above 88.3 they are clamped.
GCNLAB_HD_INLINE float softmax_exp(float x) {
#if defined(__CUDA_ARCH__)
  return expf(x);
#else
  x = x < -87.3f ? -87.3f : x > 88.3f ? 88.3f : x;  // a NaN stays NaN
  // n = round(x / ln 2) by the 1.5 * 2^23 shifter: its low mantissa bits hold n
  constexpr float kShifter = 12582912.f;
  const float t = x * 1.44269504088896341f + kShifter;
  const float n = t - kShifter;
  const std::uint32_t scale = (bits_of(t) - bits_of(kShifter) + 127u) << 23;  // 2^n
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;  // x - n ln 2 in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  return p * float_of(scale);
#endif
}

// ELU (Clevert et al.; GAT's activation between layers, alpha = 1) and its
// fused forms with dropout, as the ReLU ones around them.
// exp(v) - 1 for v <= 0 without a libm call, so that ELU's loops vectorise
// (glibc's expm1f took 11 % of a GAT epoch): its Taylor series above -0.3
// (error < 2e-9), softmax_exp(v) - 1 below (|result| > 0.25: relative error < 5e-7).
GCNLAB_HD float expm1_negative(float v) {
#if defined(__CUDA_ARCH__)
  return expm1f(v);
#else
  const float taylor = v * (1.f + v * (0.5f + v * (1.f / 6 + v * (1.f / 24 + v * (1.f / 120 + v * (1.f / 720 + v * (1.f / 5040)))))));
  return v > -0.3f ? taylor : softmax_exp(v) - 1.f;
#endif
}
GCNLAB_HD float elu(float v) { return v > 0.f ? v : expm1_negative(v); }
GCNLAB_HD float elu_slope(float v) { return v > 0.f ? 1.f : softmax_exp(v); }
// What ELU's backward reads: its input z (ELU'(z) = 1 for z > 0, else e^z), or
// its output h = ELU(z) (1 for h > 0, else h + 1 = e^z), as PyTorch's ELU
// backward with is_result: MG-GCN's shared activation plan (mggcn-1d) applies
// ELU in place and keeps only h.
enum class EluOperand { input, output };
GCNLAB_HD float elu_slope(float v, EluOperand of) {
  return of == EluOperand::input ? elu_slope(v) : (v > 0.f ? 1.f : v + 1.f);
}

// A biased layer's ELU, with the bias in the activation's pass as BiasRelu
// has it: H = ELU(Z + 1 bᵀ), Z left as it is (H may be Z: the shared plan's
// in-place ELU). z + b[j] rounds as the separate add_row did.
struct BiasElu {
  BiasSum<false> sum; float* h; std::int64_t ldh;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { h[i * ldh + j] = elu(sum(i, j)); }
};

// ELU'(Z + 1 bᵀ) from what the backward reads (`of`): the unbiased Z that
// BiasElu left, its bias added again (the same float sum), or H = ELU(Z + 1 bᵀ),
// which does not need b. Both forms are computed and one selected, b read in
// either: no branch or conditional load in the element loop, which then
// vectorises (a branch on `of` left GCC's loop scalar: 5.7 % of a GAT epoch).
struct EluSlope {
  const float* z; std::int64_t ldz; const float* b; EluOperand of;
  GCNLAB_HD float operator()(std::int64_t i, std::int64_t j) const {
    const float v = z[i * ldz + j];
    const float from_input = elu_slope(v + b[j]), from_output = elu_slope(v, EluOperand::output);
    return of == EluOperand::input ? from_input : from_output;
  }
};

// G = dH * ELU'(Z + 1 bᵀ).
struct EluBackward {
  const float* dh; std::int64_t lddh; EluSlope slope; float* g; std::int64_t ldg;
  GCNLAB_HD float value(std::int64_t i, std::int64_t j) const { return dh[i * lddh + j] * slope(i, j); }
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { g[i * ldg + j] = value(i, j); }
};

// X = dropout(ELU(Z + 1 bᵀ)), the mask of Dropout.
struct BiasEluDropout {
  Dropout d;  // d.y is X; d.x is unused
  BiasSum<false> sum;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const {
    d.y[i * d.ldy + j] = d.apply(d.key(i), j, elu(sum(i, j)));
  }
  GCNLAB_HD void row(std::int64_t i, std::int64_t cols) const {
    const std::uint64_t k = d.key(i);
    for (std::int64_t j = 0; j < cols; ++j) d.y[i * d.ldy + j] = d.apply(k, j, elu(sum(i, j)));
  }
};

// G = dropout'(dX) ELU'(Z + 1 bᵀ): the mask is redrawn (X = 0 does not tell a
// dropped element from ELU(0) = 0, as it does for ReLU).
// value() draws the row's key per element (the device's form); row() once.
struct DropoutEluBackward {
  Dropout d;  // d.x is dX; d.y is unused (g)
  EluSlope slope; float* g; std::int64_t ldg;
  GCNLAB_HD float value(std::int64_t i, std::int64_t j) const {
    return d.apply(d.key(i), j, d.x[i * d.ldx + j]) * slope(i, j);
  }
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { g[i * ldg + j] = value(i, j); }
  GCNLAB_HD void row(std::int64_t i, std::int64_t cols) const {
    const std::uint64_t k = d.key(i);
    for (std::int64_t j = 0; j < cols; ++j) g[i * ldg + j] = d.apply(k, j, d.x[i * d.ldx + j]) * slope(i, j);
  }
};

// The backward pass of X = dropout(ReLU(Z)) from X itself: X(i, j) != 0 iff the
// element was kept and Z(i, j) > 0 (a positive float times scale >= 1 is not
// zero), so G = X != 0 ? dX * scale : 0 is exactly ReLU'(Z) * mask * scale * dX
// without redrawing the mask or reading Z.
struct DropoutReluBackward {
  const float* dx; std::int64_t lddx; const float* x; std::int64_t ldx; float* g; std::int64_t ldg; float scale;
  GCNLAB_HD float value(std::int64_t i, std::int64_t j) const {
    const float d = dx[i * lddx + j] * scale, v = x[i * ldx + j];
    return v != 0.f ? d : 0.f;
  }
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { g[i * ldg + j] = value(i, j); }
};

// A backward functor's G written, and returned as the term of its column sums:
// the bias's gradient Σ_i G_i taken in the pass that forms G (summed as
// ColumnSums sums, so the bits are column_sums(G)'s). F: ReluBackward,
// DropoutReluBackward, EluBackward or DropoutEluBackward.
template <class F>
struct WrittenColumnSums {
  F f; float* out;
  GCNLAB_HD double term(std::int64_t i, std::int64_t j) const {
    const float v = f.value(i, j);
    f.g[i * f.ldg + j] = v;
    return v;
  }
};

// out[c] = Σ_i x[i, c] accumulated in double, rows in order (a bias's gradient,
// Σ_i G_i: G's columns of a class-balanced loss nearly cancel, and a float
// accumulator over n rows lost ~1e-5 of the result against PyTorch's cascade sum).
// The CPU backend sums fixed blocks of rows and then the blocks in order (the
// same bits at any thread count); the device sums fixed chunks of rows in a
// fixed tree per block, then the chunks in order (cuda::column_reduce).
struct ColumnSums {
  const float* x; std::int64_t ld, rows; float* out;
  GCNLAB_HD double term(std::int64_t i, std::int64_t c) const { return x[i * ld + c]; }
  GCNLAB_HD void operator()(std::int64_t c) const {
    double acc = 0;
    for (std::int64_t i = 0; i < rows; ++i) acc += term(i, c);
    out[c] = static_cast<float>(acc);
  }
};

// <X, Y> = Σ_i,c x[i, c] y[i, c] (GIN's dL/dε = <X, D>): each product exact in
// double, summed as ColumnSums sums its terms (per column, by the backend's
// fixed blocks of rows), then those partial sums in a fixed order, rounded
// once: the same bits at any thread count. It replaced a 1 x n by n x 1 GEMM,
// which OpenBLAS runs on one thread.
struct InnerProduct {
  const float* x; std::int64_t ldx; const float* y; std::int64_t ldy; std::int64_t rows; float* out;
  GCNLAB_HD double term(std::int64_t i, std::int64_t c) const {
    return static_cast<double>(x[i * ldx + c]) * static_cast<double>(y[i * ldy + c]);
  }
};

// --- RMSNorm (ScaleGNN Eq. 7 and 29), one row at a time. A row's columns may
// be split over several ranks (3D PMM): each computes its columns' sum of
// squares, the sums are combined across the ranks, then n = z γ / rms with
//   rms = sqrt(sumsq / width + eps),  width the row's global column count.
struct NormParams { float width, eps; };
GCNLAB_HD float inv_rms(float sumsq, NormParams p) { return 1.f / sqrtf(sumsq / p.width + p.eps); }

struct RowSumSquares {
  const float* z; std::int64_t ld, cols; float* out;
  GCNLAB_HD void operator()(std::int64_t i) const {
    float s = 0.f;
    for (std::int64_t j = 0; j < cols; ++j) s += z[i * ld + j] * z[i * ld + j];
    out[i] = s;
  }
};

// Y += dropout(ReLU(RMSNorm(Z))): a GNN layer's output added to its (resharded)
// input, X_h,l = X_d,l + X_h,l-1 (Eq. 7-10). `gamma` holds the local columns'
// scales; the dropout mask is Dropout's (keyed by vertex and global column).
struct NormReluDropoutAdd {
  Dropout d;  // d.x = Z, d.y = Y
  const float* sumsq; const float* gamma; NormParams n; bool drop;
  GCNLAB_HD float value(std::uint64_t key, std::int64_t i, std::int64_t j, float inv) const {
    const float v = d.x[i * d.ldx + j] * gamma[j] * inv;
    const float r = v > 0.f ? v : 0.f;
    return drop ? d.apply(key, j, r) : r;
  }
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const {
    d.y[i * d.ldy + j] += value(drop ? d.key(i) : 0, i, j, inv_rms(sumsq[i], n));
  }
  GCNLAB_HD void row(std::int64_t i, std::int64_t cols) const {
    const std::uint64_t k = drop ? d.key(i) : 0;
    const float inv = inv_rms(sumsq[i], n);
    for (std::int64_t j = 0; j < cols; ++j) d.y[i * d.ldy + j] += value(k, i, j, inv);
  }
};

// Its backward pass up to the normalisation: G = dL/dN = dY ⊙ mask · scale ⊙
// [N > 0], with N > 0 iff Z γ > 0 (rms > 0), so neither N nor the mask is kept.
struct NormReluDropoutBackward {
  Dropout d;  // d.x = dY, d.y = G
  const float* z; std::int64_t ldz; const float* gamma; bool drop;
  GCNLAB_HD float value(std::uint64_t key, std::int64_t i, std::int64_t j) const {
    const float dy = d.x[i * d.ldx + j];
    if (!(z[i * ldz + j] * gamma[j] > 0.f)) return 0.f;
    return drop ? d.apply(key, j, dy) : dy;
  }
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const {
    d.y[i * d.ldy + j] = value(drop ? d.key(i) : 0, i, j);
  }
  GCNLAB_HD void row(std::int64_t i, std::int64_t cols) const {
    const std::uint64_t k = drop ? d.key(i) : 0;
    for (std::int64_t j = 0; j < cols; ++j) d.y[i * d.ldy + j] = value(k, i, j);
  }
};

// dL/dγ_j = Σ_i G_ij Z_ij / rms_i over this rank's rows (one column per call).
struct NormScaleGradient {
  const float* g; std::int64_t ldg; const float* z; std::int64_t ldz, rows; const float* sumsq; NormParams n;
  float* out;
  GCNLAB_HD double term(std::int64_t i, std::int64_t j) const { return g[i * ldg + j] * z[i * ldz + j] * inv_rms(sumsq[i], n); }
  GCNLAB_HD void operator()(std::int64_t j) const {  // the CPU's form; the device sums term() as ColumnSums
    float s = 0.f;
    for (std::int64_t i = 0; i < rows; ++i) s += g[i * ldg + j] * z[i * ldz + j] * inv_rms(sumsq[i], n);
    out[j] = s;
  }
};

// t_i = Σ_j G_ij γ_j Z_ij over this rank's columns (combined across ranks like sumsq).
struct NormRowDot {
  const float* g; std::int64_t ldg; const float* z; std::int64_t ldz, cols; const float* gamma; float* out;
  GCNLAB_HD void operator()(std::int64_t i) const {
    float s = 0.f;
    for (std::int64_t j = 0; j < cols; ++j) s += g[i * ldg + j] * gamma[j] * z[i * ldz + j];
    out[i] = s;
  }
};

// dL/dZ = γ G / rms - Z t / (width rms³), in place over G (n = γ z / rms,
// d(1/rms)/dz_k = -z_k / (width rms³)).
struct NormBackward {
  float* g; std::int64_t ldg; const float* z; std::int64_t ldz; const float* sumsq; const float* gamma;
  const float* t; NormParams n;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const {
    const float inv = inv_rms(sumsq[i], n);
    g[i * ldg + j] = inv * gamma[j] * g[i * ldg + j] - z[i * ldz + j] * inv * inv * inv * t[i] / n.width;
  }
};

// Y += a X
struct Axpy {
  float a; const float* x; std::int64_t ldx; float* y; std::int64_t ldy;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { y[i * ldy + j] += a * x[i * ldx + j]; }
};

// y += (a + s[0]) x with s one value in backend memory (GIN's trained ε): the
// scalar is read where the kernel runs, not copied to the host first.
struct AxpyPlus {
  float a; const float* s; const float* x; std::int64_t ldx; float* y; std::int64_t ldy;
  GCNLAB_HD void operator()(std::int64_t i, std::int64_t j) const { y[i * ldy + j] += (a + s[0]) * x[i * ldx + j]; }
};

// Adam (Kingma & Ba 2015, Alg. 1) on one element; bias corrections are
// precomputed per step: c1 = 1 - b1^t, c2 = 1 - b2^t.
struct AdamParams { float lr, beta1, beta2, eps, c1, c2; };
struct Adam {
  float* w; const float* g; float* m; float* v; AdamParams p;
  GCNLAB_HD void operator()(std::int64_t k) const {
    const float gk = g[k];
    m[k] = p.beta1 * m[k] + (1.f - p.beta1) * gk;
    v[k] = p.beta2 * v[k] + (1.f - p.beta2) * gk * gk;
    const float mhat = m[k] / p.c1, vhat = v[k] / p.c2;
    w[k] -= p.lr * mhat / (sqrtf(vhat) + p.eps);
  }
};

struct Sgd {
  float* w; const float* g; float lr;
  GCNLAB_HD void operator()(std::int64_t k) const { w[k] -= lr * g[k]; }
};

// --- softmax cross-entropy, row functors. The class dimension may be split
// over several ranks (2D/3D strategies): each rank holds columns
// [col0, col0 + cols) of the logits; row max and row sum of exponentials are
// combined across the class group between the three steps.

// fmaxf(m, x) for an m that is not NaN (a running max from -inf), inline: on the
// host GCC calls libm's fmaxf, glibc's maxss behind NaN checks, and the calls
// were a third of the loss's time. The same value: m > x ? m : x (x on a tie,
// so the sign of a ±0 tie is fmaxf's too), and m where x is NaN.
GCNLAB_HD_INLINE float running_max(float m, float x) {
#if defined(__CUDA_ARCH__)
  return fmaxf(m, x);
#else
  return m > x || x != x ? m : x;
#endif
}

struct RowMax {
  const float* z; std::int64_t ld, cols; float* out;
  GCNLAB_HD float row(std::int64_t i) const {
    float m = -INFINITY;
    for (std::int64_t j = 0; j < cols; ++j) m = running_max(m, z[i * ld + j]);
    return m;
  }
  GCNLAB_HD void operator()(std::int64_t i) const { out[i] = row(i); }
};

struct RowSumExp {
  const float* z; std::int64_t ld, cols; const float* max; float* out;
  GCNLAB_HD float row(std::int64_t i, float m) const {
    float s = 0.f;
    for (std::int64_t j = 0; j < cols; ++j) s += softmax_exp(z[i * ld + j] - m);
    return s;
  }
  GCNLAB_HD void operator()(std::int64_t i) const { out[i] = row(i, max[i]); }
};

// Per row: gradient of the mean cross-entropy over the global training rows
//   G[i][c] = (softmax(z_i)_c - [c == y_i]) * scale   for training rows, else 0,
// and, on the rank that holds column y_i, the row's loss -log softmax(z_i)_{y_i}
// and whether it is classified correctly (z_{i,y_i} is the row max).
// Labels are never modified (unlike Plexus' cross_entropy.py).
struct XentRow {
  double loss;      // contribution to the training loss sum
  int correct;      // 1 if this rank saw the label column and it is the argmax
  int counted;      // 1 if this rank saw the label column
};
struct SoftmaxXent {
  const float* z; std::int64_t ldz, cols, col0; const float* max; const float* sum;
  const std::int32_t* label; const std::uint8_t* split; float scale;
  float* g; std::int64_t ldg;
  // max and sum: the row max and row sum of exponentials over all classes, or
  // null when the whole row is local (the pass computes them: one pass per row).
  // G may share Z's storage (a row is read before it is overwritten).
  GCNLAB_HD XentRow operator()(std::int64_t i) const {
    XentRow r;
    rows<1>(i, &r);
    return r;
  }
  // Rows [i0, i0 + R) as operator() gives them one at a time: each row's max
  // and sum in a chain of its own in column order (the same bits), R chains
  // side by side so that their latencies overlap (one row's 32 additions,
  // each waiting on the last, bound the host's loss; CpuBackend runs R = 8).
  template <int R>
  GCNLAB_HD void rows(std::int64_t i0, XentRow* out) const {
    float m[R], s[R], zy[R];
    for (int r = 0; r < R; ++r) {
      const std::int64_t y = label[i0 + r] - col0;
      zy[r] = y >= 0 && y < cols ? z[(i0 + r) * ldz + y] : 0.f;  // before G overwrites it
      m[r] = max ? max[i0 + r] : -INFINITY;
      s[r] = max ? sum[i0 + r] : 0.f;
    }
    if (!max)
      for (std::int64_t j = 0; j < cols; ++j)
        for (int r = 0; r < R; ++r) m[r] = running_max(m[r], z[(i0 + r) * ldz + j]);
    for (int r = 0; r < R; ++r) {
      const float* zi = z + (i0 + r) * ldz;
      float* gi = g + (i0 + r) * ldg;
      for (std::int64_t j = 0; j < cols; ++j) gi[j] = softmax_exp(zi[j] - m[r]);
    }
    if (!max)  // the exponentials, kept in G, summed in order
      for (std::int64_t j = 0; j < cols; ++j)
        for (int r = 0; r < R; ++r) s[r] += g[(i0 + r) * ldg + j];
    for (int r = 0; r < R; ++r) out[r] = finish(i0 + r, m[r], s[r], zy[r]);
  }
  // Row i's gradient from its exponentials in G, its max m, sum s and label logit zy.
  GCNLAB_HD XentRow finish(std::int64_t i, float m, float s, float zy) const {
    XentRow r{0.0, 0, 0};
    const std::int64_t y = label[i] - col0;
    const bool train = split[i] == kTrain;
    const bool labelled = y >= 0 && y < cols;
    float* gi = g + i * ldg;
    const float inv = train ? scale / s : 0.f;
    for (std::int64_t j = 0; j < cols; ++j) gi[j] *= inv;
    if (train && labelled) gi[y] -= scale;
    if (labelled && split[i] != kNone) {
      r.counted = 1;
      r.correct = zy >= m ? 1 : 0;
      if (train) r.loss = -(static_cast<double>(zy) - m - log(static_cast<double>(s)));
    }
    return r;
  }
};

}  // namespace gcnlab::ew

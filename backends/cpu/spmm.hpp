#pragma once
// The CPU SpMM, Y = A X + beta Y, for every shape the strategies multiply:
// whole graphs, block rows, hypersparse column blocks (compressed rows), any
// width f. One entry point; the code path is chosen inside:
//   - threads take contiguous row ranges balanced by nonzeros (plus one unit
//     per row), in more chunks than threads, scheduled dynamically, so a
//     power-law hub row does not leave one thread working alone;
//   - the width is cut into column segments of SIMD vectors (16 floats on
//     AVX-512, 8 on AVX2) held in registers for a whole row (up to 8 vectors
//     on AVX-512, 4 on AVX2), so an output row is written once and never read
//     for beta = 0; a remainder narrower than one vector runs a plain loop;
//     the rows are walked segment by segment, each segment over every chunk
//     before the next, so that a pass gathers from one slab of X's columns,
//     which the last-level cache can hold (its columns packed side by side
//     into a lent slab where X is large: Slab below); or, where an X row is 1 KiB or
//     more (Cora's 1433 features), a chunk row by row through every segment,
//     so that each X row is read in order rather than a piece per pass;
//   - every segment accumulates two nonzeros at a time into two register sets
//     (the even and odd offsets of the row), which hides the add latency and
//     fixes each value's order of summation whatever the vector width: every
//     path, on every ISA, gives the same bits (docs/design.md, reproducibility);
//   - the X rows of the nonzeros a few steps ahead are prefetched, since the
//     gathers are the kernel's memory traffic.
// For the rows a compressed block does not store only beta applies.
// With `progress`, chunks hold at most ~kProgressNnz nonzeros and the calling
// thread (OpenMP's master: MPI_THREAD_FUNNELED allows it to call MPI) calls
// it after each of its chunks.

#include <functional>

#include "common/backend/edge_ops.hpp"
#include "common/matrix/csr.hpp"
#include "common/matrix/dense.hpp"

namespace gcnlab::cpu {

// A term on Y's own rows added in the product's output pass, after beta:
// y_i = (A X)_i + beta y_i + c r_i, the bits of the product followed by an
// axpy of c R (GIN's (1 + ε) h_i, Backend::spmm_plus). R has Y's rows and
// columns; none where r is null.
struct RowAddend {
  const float* r = nullptr;
  std::int64_t ldr = 0;
  float c = 0.f;
};

// Work memory the segment-major walk packs X's column slabs into: one slab of
// rows x (a register segment's width) floats, the segment's columns of each
// X row side by side. A pass then gathers from a dense array instead of a
// strided slice of X: the segment's lines of each row, and not the lines of
// other segments that the hardware fetches beside them (R-MAT 17 at f = 128,
// AVX2, four 32-float segments: the SpMM ~25 % faster, the packing included).
// The same values in the same order: the bits do not depend on it.
struct Slab {
  float* data = nullptr;
  std::int64_t rows = 0;  // the X rows it holds
};
// The slab's floats for X of `rows` rows at width f, 0 where the SpMM never
// packs: f within one segment, rows walked one at a time (1 KiB and more), or
// X under 8 MiB (held in the caches anyway).
std::int64_t slab_floats(std::int64_t rows, std::int64_t f);

// With `slab` (at least x.rows rows), the walk packs each full segment's columns into it before
// its pass, where the product gathers at least two nonzeros per X row.
void spmm(const Csr& a, ConstView x, View y, float beta, const std::function<void()>& progress = {},
          RowAddend t = {}, Slab slab = {});

// Graph attention's aggregation with per-edge, per-head values (concatenated
// heads, hs.mean = 0): Y = V X, y_i[c] = Σ_k v[e(k), head(c)] x_{col k}[c]
// with e(k) = perm ? perm[k] : k. The same row ranges, register segments and
// prefetch as spmm; each value is one chain over the row's edges in storage
// order, the bits of ew::SpmmEdges's row form on every ISA. A vector whose
// lanes span several heads takes each lane's head value by a select. Rows a
// compressed block does not store are left to the caller.
// With `dots` (Backend::spmm_sddmm_edges, a the transposed block): also the
// SDDMM dots[e(k), h] = x_{col k} · z_i over head h's columns, z_i the row's
// own row of z, as ew::Sddmm computes them (ew::ordered_dot: the same bits),
// from the x row the product has just read (the whole row prefetched ahead,
// where the product's own walk prefetches its column segment's lines).
struct EdgeDots {
  ConstView z;
  float* out = nullptr;
};
// `slab`: as spmm's (the forward's segment-major walk; the dots' walks by row).
void spmm_edge_values(const Csr& a, int heads, ew::HeadSplit hs, const float* v, const std::int64_t* perm,
                      ConstView x, View y, EdgeDots dots = {}, Slab slab = {});

// The plain row loop (OpenMP over rows, a vectorised axpy per nonzero): what
// the kernel is checked against in the tests and timed against in `gcnlab bench`.
void spmm_row_loop(const Csr& a, ConstView x, View y, float beta);

}  // namespace gcnlab::cpu

// The CUDA launchers of the element-wise functors: the same functors the CPU
// backend runs in OpenMP loops (common/backend/elementwise.hpp).

#include <algorithm>
#include <stdexcept>
#include <string>

#include "backends/cuda/kernels.hpp"

namespace gcnlab::cuda {

namespace {

constexpr int kThreads = 256;

int blocks_for(std::int64_t n) {
  return static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 65535 * 16));
}

template <class F>
__global__ void each_2d(std::int64_t rows, std::int64_t cols, F f) {
  const std::int64_t n = rows * cols;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    f(k / cols, k % cols);
}

template <class F>
__global__ void each_1d(std::int64_t n, F f) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    f(k);
}

void check_launch() {
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess) throw std::runtime_error(std::string("CUDA kernel launch failed: ") + cudaGetErrorString(rc));
}

template <class F>
void launch_2d(cudaStream_t s, std::int64_t rows, std::int64_t cols, const F& f) {
  if (rows <= 0 || cols <= 0) return;
  each_2d<<<blocks_for(rows * cols), kThreads, 0, s>>>(rows, cols, f);
  check_launch();
}

template <class F>
void launch_1d(cudaStream_t s, std::int64_t n, const F& f) {
  if (n <= 0) return;
  each_1d<<<blocks_for(n), kThreads, 0, s>>>(n, f);
  check_launch();
}

struct XentToArrays {
  ew::SoftmaxXent f;
  double* loss;
  int* correct;
  int* counted;
  __device__ void operator()(std::int64_t i) const {
    const ew::XentRow r = f(i);
    loss[i] = r.loss;
    correct[i] = r.correct;
    counted[i] = r.counted;
  }
};

struct Narrow {
  const std::int64_t* in;
  std::int32_t* out;
  __device__ void operator()(std::int64_t i) const { out[i] = static_cast<std::int32_t>(in[i]); }
};

struct Scale {
  float* y;
  std::int64_t ld;
  float beta;
  __device__ void operator()(std::int64_t i, std::int64_t j) const { y[i * ld + j] *= beta; }
};

// y[row_ids[s]] += Σ_k val[k] x[col[k]] for stored row s of a compressed-row CSR;
// one thread per (stored row, column), so a warp reads consecutive columns.
struct SpmmRows {
  const std::int32_t* ids;
  const std::int64_t* rowptr;
  const std::int32_t* col;
  const float* val;
  const float* x;
  std::int64_t ldx;
  float* y;
  std::int64_t ldy;
  __device__ void operator()(std::int64_t s, std::int64_t j) const {
    float acc = 0.f;
    for (std::int64_t k = rowptr[s]; k < rowptr[s + 1]; ++k) acc += val[k] * x[col[k] * ldx + j];
    y[ids[s] * ldy + j] += acc;
  }
};

// --- Graph attention's edge passes (edge_ops.hpp), walked as backends/row_chunks.hpp
// plans (RowWalk): a short row by a group of L lanes (a power of two, H | L where H | 32),
// its lanes over the row's (edge, head) elements, flat q = k H + h from the row's first,
// L apart: consecutive lanes read consecutive values of the edge-major tensors. A long
// row in chunks of a warp each. A per-row, per-head sum is each lane's partial sum, then
// a butterfly over the group's lanes of one head (lane l always holds head l mod H), then,
// for a long row, its chunks' results in chunk order: fixed trees, the same bits on every
// run, whatever the schedule. Other H: a warp per row and the row form on one lane (correct,
// not fast: GAT's heads are powers of two).
constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ bool lanes_hold_heads(int heads) { return heads <= kWarp && kWarp % heads == 0; }

// each(k, h) for the elements of edges [k0, k1) by lane `lane` of L (no 64-bit division:
// lane l's head is l mod H where H | L, and its edges step by L / H).
template <int L, class Each>
__device__ void range_elements(int H, std::int64_t k0, std::int64_t k1, int lane, Each each) {
  if (H <= L && L % H == 0) {
    const int h = lane % H, step = L / H;
    for (std::int64_t k = k0 + lane / H; k < k1; k += step) each(k, h);
  } else {
    const int n = static_cast<int>((k1 - k0) * H);  // a block row has < 2^31 elements
    for (int q = lane; q < n; q += L) each(k0 + q / H, q % H);
  }
}

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return b > a ? b : a; }  // inline (fmaxf: a libm call)
};

// The passes. Each has its functor f (f.b the block) and
//   range<L>(i, k0, k1, lane): its work on edges [k0, k1) of row i by lane `lane` of L;
// a reduction (kReduces) returns the lane's value after the butterfly (lanes < H: head
// lane's), and has term(i, k, h), init, Op, out() and the row form f(s) for other H.
template <class F>
struct Elements {  // f.at(i, k, h) on every element: scores, scaling, the softmax's backward, the SDDMMs
  static constexpr bool kReduces = false;
  F f;
  template <int L>
  __device__ void range(std::int64_t i, std::int64_t k0, std::int64_t k1, int lane) const {
    range_elements<L>(f.b.heads, k0, k1, lane, [&](std::int64_t k, int h) { f.at(i, k, h); });
  }
};

struct Dropout {
  static constexpr bool kReduces = false;
  ew::EdgeDropout f;
  template <int L>
  __device__ void range(std::int64_t i, std::int64_t k0, std::int64_t k1, int lane) const {
    if (k0 == k1) return;
    const std::uint64_t key = f.key(i);
    range_elements<L>(f.b.heads, k0, k1, lane, [&](std::int64_t k, int h) { f.at(key, k, h); });
  }
};

template <class P, class Fold>
struct Reduction {
  static constexpr bool kReduces = true;
  using Op = Fold;
  template <int L>
  __device__ float range(std::int64_t i, std::int64_t k0, std::int64_t k1, int lane) const {
    const P& p = static_cast<const P&>(*this);
    const int H = p.f.b.heads;
    float acc = P::init();
    range_elements<L>(H, k0, k1, lane, [&](std::int64_t k, int h) { acc = Op{}(acc, p.term(i, k, h)); });
    for (int o = L / 2; o >= H; o /= 2) acc = Op{}(acc, __shfl_xor_sync(kFullMask, acc, o));
    return acc;
  }
};

template <class F>
struct RowSums : Reduction<RowSums<F>, Sum> {  // out_i,h = Σ_k f.term(k, h): EdgeRowDot, EdgeRowSums
  F f;
  __host__ __device__ explicit RowSums(const F& fn) : f(fn) {}
  static __device__ float init() { return 0.f; }
  __device__ float term(std::int64_t, std::int64_t k, int h) const { return f.term(k, h); }
  __device__ float* out() const { return f.out; }
};

struct RowMax : Reduction<RowMax, Max> {
  ew::EdgeRowMax f;
  __host__ __device__ explicit RowMax(const ew::EdgeRowMax& fn) : f(fn) {}
  static __device__ float init() { return -INFINITY; }
  __device__ float term(std::int64_t, std::int64_t k, int h) const { return f.e[k * f.b.heads + h]; }
  __device__ float* out() const { return f.max; }
};

struct ExpRowSum : Reduction<ExpRowSum, Sum> {  // writes e_ij = exp(e_ij - m_i) as it sums them
  ew::EdgeExpRowSum f;
  __host__ __device__ explicit ExpRowSum(const ew::EdgeExpRowSum& fn) : f(fn) {}
  static __device__ float init() { return 0.f; }
  __device__ float term(std::int64_t i, std::int64_t k, int h) const { return f.at(i, k, h); }
  __device__ float* out() const { return f.sum; }
};

// Pass p on stored row s (`mine`: s is this group's and short) by lane `lane` of L. Every
// lane of the warp calls it, a group with no row as well (the butterflies' shuffles).
template <int L, class P>
__device__ void short_row(const P& p, std::int64_t s, bool mine, int lane) {
  const ew::EdgeBlock& b = p.f.b;
  const std::int64_t i = mine ? b.row_of(s) : 0, k0 = mine ? b.begin(s) : 0, k1 = mine ? b.end(s) : 0;
  if constexpr (P::kReduces) {
    const int H = b.heads;
    if (!lanes_hold_heads(H)) {  // the same for every lane: L = 32 here (plan_row_chunks)
      if (mine && lane == 0) p.f(s);
      return;
    }
    const float acc = p.template range<L>(i, k0, k1, lane);
    if (mine && lane < H) p.out()[i * H + lane] = acc;
  } else {
    p.template range<L>(i, k0, k1, lane);
  }
}

// A pass over the short rows alone: its short_row<L>.
template <class P>
struct ShortRows {
  P p;
  template <int L>
  __device__ void operator()(std::int64_t s, bool mine, int lane) const { short_row<L>(p, s, mine, lane); }
};

// The four passes on one short row by one group (ew::EdgeSoftmax): each pass's lanes as in
// its own kernel, so the same bits; between passes the warp's lanes meet (__syncwarp orders
// their writes of e, max and sum before the next pass's reads; every lane reaches it).
struct SoftmaxRows {
  ew::EdgeSoftmax f;
  template <int L>
  __device__ void operator()(std::int64_t s, bool mine, int lane) const {
    short_row<L>(Elements<ew::EdgeScores>{{f.b, f.src, f.dst, f.slope, f.e}}, s, mine, lane);
    __syncwarp();
    short_row<L>(RowMax{{f.b, f.e, f.max}}, s, mine, lane);
    __syncwarp();
    short_row<L>(ExpRowSum{{f.b, f.max, f.e, f.sum}}, s, mine, lane);
    __syncwarp();
    short_row<L>(Elements<ew::EdgeScaleRows>{{f.b, f.sum, f.e}}, s, mine, lane);
  }
};

// The softmax's backward on one short row by one group (ew::EdgeSoftmaxGrad), as SoftmaxRows.
struct SoftmaxGradRows {
  ew::EdgeSoftmaxGrad f;
  template <int L>
  __device__ void operator()(std::int64_t s, bool mine, int lane) const {
    short_row<L>(RowSums<ew::EdgeRowDot>{{f.b, f.alpha, f.d, f.rowdot}}, s, mine, lane);
    __syncwarp();
    short_row<L>(Elements<ew::EdgeSoftmaxBackward>{{f.b, f.alpha, f.rowdot, f.src, f.dst, f.slope, f.d}}, s, mine,
                 lane);
    __syncwarp();
    short_row<L>(RowSums<ew::EdgeRowSums>{{f.b, f.d, nullptr, f.dd}}, s, mine, lane);
  }
};

// Groups of L lanes over the stored rows, a warp's kWarp / L rows at a time (the loop is the
// warp's, so that every lane meets the shuffles); long rows are left to long_chunks.
template <int L, class R>
__global__ void short_rows(RowWalk w, const std::int64_t* rowptr, R r) {
  constexpr int kGroups = kWarp / L;
  const int lane = static_cast<int>(threadIdx.x % L), group = static_cast<int>(threadIdx.x % kWarp) / L;
  const std::int64_t warp = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / kWarp;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / kWarp);
  for (std::int64_t s0 = warp * kGroups; s0 < w.stored; s0 += warps * kGroups) {
    const std::int64_t s = s0 + group;
    const bool mine = s < w.stored && rowptr[s + 1] - rowptr[s] <= w.short_edges;
    r.template operator()<L>(s, mine, lane);
  }
}

template <int L, class R>
void launch_short(cudaStream_t st, const RowWalk& w, const std::int64_t* rowptr, const R& r) {
  constexpr int rows_per_block = kThreads / L;
  const int blocks =
      static_cast<int>(std::min<std::int64_t>((w.stored + rows_per_block - 1) / rows_per_block, 65535 * 16));
  short_rows<L><<<blocks, kThreads, 0, st>>>(w, rowptr, r);
}

template <class R>
void launch_short_rows(cudaStream_t st, const RowWalk& w, const std::int64_t* rowptr, const R& r) {
  if (w.stored <= 0) return;
  switch (w.lanes) {
    case 1: launch_short<1>(st, w, rowptr, r); break;
    case 2: launch_short<2>(st, w, rowptr, r); break;
    case 4: launch_short<4>(st, w, rowptr, r); break;
    case 8: launch_short<8>(st, w, rowptr, r); break;
    case 16: launch_short<16>(st, w, rowptr, r); break;
    default: launch_short<kWarp>(st, w, rowptr, r); break;
  }
  check_launch();
}

// A warp per chunk of the long rows: pass p on the chunk's edges; a reduction's lanes < H
// write the chunk's result to w.partial[q H + lane].
template <class P>
__global__ void long_chunks(RowWalk w, P p) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / kWarp);
  const ew::EdgeBlock& b = p.f.b;
  for (std::int64_t q = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / kWarp; q < w.chunks;
       q += warps) {
    const std::int32_t r = w.chunk_row[q];
    const std::int64_t s = w.rows[r], i = b.row_of(s);
    const std::int64_t k0 = b.begin(s) + (q - w.first[r]) * w.chunk;
    const std::int64_t k1 = k0 + w.chunk < b.end(s) ? k0 + w.chunk : b.end(s);
    if constexpr (P::kReduces) {
      const float acc = p.template range<kWarp>(i, k0, k1, lane);
      if (lane < b.heads) w.partial[q * b.heads + lane] = acc;
    } else {
      p.template range<kWarp>(i, k0, k1, lane);
    }
  }
}

// A thread per (long row, head): the row's chunk results folded in chunk order.
template <class P>
__global__ void combine_chunks(RowWalk w, P p) {
  const int H = p.f.b.heads;
  const std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (t >= w.long_rows * H) return;
  const std::int64_t r = t / H;
  const int h = static_cast<int>(t % H);
  float acc = w.partial[w.first[r] * H + h];
  for (std::int64_t q = w.first[r] + 1; q < w.first[r + 1]; ++q) acc = typename P::Op{}(acc, w.partial[q * H + h]);
  p.out()[p.f.b.row_of(w.rows[r]) * H + h] = acc;
}

template <class P>
void launch_long(cudaStream_t st, const RowWalk& w, const P& p) {
  if (w.chunks <= 0) return;
  constexpr int per_block = kThreads / kWarp;
  long_chunks<<<static_cast<int>(std::min<std::int64_t>((w.chunks + per_block - 1) / per_block, 65535 * 16)), kThreads,
                0, st>>>(w, p);
  check_launch();
  if constexpr (P::kReduces) {
    combine_chunks<<<static_cast<int>((w.long_rows * p.f.b.heads + kThreads - 1) / kThreads), kThreads, 0, st>>>(w, p);
    check_launch();
  }
}

// One pass over the whole block: its short rows, then its long rows' chunks.
template <class P>
void walk(cudaStream_t st, const RowWalk& w, const P& p) {
  launch_short_rows(st, w, p.f.b.rowptr, ShortRows<P>{p});
  launch_long(st, w, p);
}

// --- Column reductions (a bias's gradient Σ_i G_i, RMSNorm's dγ): out[c] = Σ_i
// f.term(i, c) in double. Block (x, y) sums rows [x C, x C + C) of columns
// [32 y, 32 y + 32), C = kColumnChunk, 8 row lanes a column in a fixed shared-memory
// tree; then one thread a column adds the chunks in order. The grid follows
// the shape only: the same bits on every run and every device.
constexpr int kColumnChunk = 2048, kColumnLanes = 8;

template <class F>
__global__ void column_partials(std::int64_t rows, std::int64_t cols, F f, double* partial) {
  __shared__ double tree[kColumnLanes][kWarp];
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.y) * kWarp + threadIdx.x;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * kColumnChunk;
  const std::int64_t r1 = r0 + kColumnChunk < rows ? r0 + kColumnChunk : rows;
  double acc = 0;
  if (c < cols)
    for (std::int64_t i = r0 + threadIdx.y; i < r1; i += kColumnLanes) acc += f.term(i, c);
  tree[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  for (int w = kColumnLanes / 2; w > 0; w /= 2) {
    if (threadIdx.y < w) tree[threadIdx.y][threadIdx.x] += tree[threadIdx.y + w][threadIdx.x];
    __syncthreads();
  }
  if (threadIdx.y == 0 && c < cols) partial[blockIdx.x * cols + c] = tree[0][threadIdx.x];
}

__global__ void column_totals(std::int64_t chunks, std::int64_t cols, const double* partial, float* out) {
  const std::int64_t c = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (c >= cols) return;
  double acc = 0;
  for (std::int64_t b = 0; b < chunks; ++b) acc += partial[b * cols + c];
  out[c] = static_cast<float>(acc);
}

// partial[chunk * cols + c] for every chunk of rows; the chunk count.
template <class F>
std::int64_t launch_column_partials(cudaStream_t s, std::int64_t rows, std::int64_t cols, const F& f, double* partial) {
  const std::int64_t chunks = cols > 0 ? column_chunks(rows) : 0;
  if (chunks > 0) {
    column_partials<<<dim3(static_cast<unsigned>(chunks), static_cast<unsigned>((cols + kWarp - 1) / kWarp)),
                      dim3(kWarp, kColumnLanes), 0, s>>>(rows, cols, f, partial);
    check_launch();
  }
  return chunks;
}

template <class F>
void column_reduce(cudaStream_t s, std::int64_t rows, std::int64_t cols, const F& f, float* out, double* partial) {
  if (cols <= 0) return;
  const std::int64_t chunks = launch_column_partials(s, rows, cols, f, partial);
  column_totals<<<static_cast<int>((cols + kThreads - 1) / kThreads), kThreads, 0, s>>>(chunks, cols, partial, out);
  check_launch();
}

// out[0] = Σ partial[0 .. count): each thread sums a strided share in order, then a fixed tree.
__global__ void partials_total(std::int64_t count, const double* partial, float* out) {
  __shared__ double tree[kThreads];
  double acc = 0;
  for (std::int64_t k = threadIdx.x; k < count; k += kThreads) acc += partial[k];
  tree[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) tree[threadIdx.x] += tree[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = static_cast<float>(tree[0]);
}

}  // namespace

std::int64_t column_chunks(std::int64_t rows) { return (rows + kColumnChunk - 1) / kColumnChunk; }

void fill(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Fill& f) { launch_2d(s, r, c, f); }
void copy(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Copy& f) { launch_2d(s, r, c, f); }
void transpose(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Transpose& f) { launch_2d(s, r, c, f); }
void axpy(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Axpy& f) { launch_2d(s, r, c, f); }
void axpy_plus(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::AxpyPlus& f) { launch_2d(s, r, c, f); }
void column_sums(cudaStream_t s, std::int64_t cols, const ew::ColumnSums& f, double* partial) {
  column_reduce(s, f.rows, cols, f, f.out, partial);
}
void inner_product(cudaStream_t s, std::int64_t cols, const ew::InnerProduct& f, double* partial) {
  const std::int64_t chunks = launch_column_partials(s, f.rows, cols, f, partial);
  partials_total<<<1, kThreads, 0, s>>>(chunks * cols, partial, f.out);
  check_launch();
}
void gather_rows(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::GatherRows& f) { launch_2d(s, r, c, f); }
void pack_bf16(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::PackBf16& f) { launch_2d(s, r, c, f); }
void unpack_bf16(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::UnpackBf16& f) { launch_2d(s, r, c, f); }
void relu(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Relu& f) { launch_2d(s, r, c, f); }
void relu_backward(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::ReluBackward& f) { launch_2d(s, r, c, f); }
void dropout(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::Dropout& f) { launch_2d(s, r, c, f); }
void relu_dropout(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::ReluDropout& f) { launch_2d(s, r, c, f); }
void dropout_relu_backward(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::DropoutReluBackward& f) {
  launch_2d(s, r, c, f);
}
void add_row(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::AddRow& f) { launch_2d(s, r, c, f); }
void bias_relu(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::BiasRelu<false>& f) { launch_2d(s, r, c, f); }
void bias_relu(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::BiasRelu<true>& f) { launch_2d(s, r, c, f); }
void bias_relu_dropout(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::BiasReluDropout<false>& f) {
  launch_2d(s, r, c, f);
}
void bias_relu_dropout(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::BiasReluDropout<true>& f) {
  launch_2d(s, r, c, f);
}
template <class F>
void written_column_sums(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::WrittenColumnSums<F>& f,
                         double* partial) {
  column_reduce(s, r, c, f, f.out, partial);
}
// The activations' backward passes that take the bias's gradient (kernels.hpp).
#define GCNLAB_WRITTEN_COLUMN_SUMS(F) \
  template void written_column_sums(cudaStream_t, std::int64_t, std::int64_t, const ew::WrittenColumnSums<F>&, double*);
GCNLAB_WRITTEN_COLUMN_SUMS(ew::ReluBackward)
GCNLAB_WRITTEN_COLUMN_SUMS(ew::DropoutReluBackward)
GCNLAB_WRITTEN_COLUMN_SUMS(ew::EluBackward)
GCNLAB_WRITTEN_COLUMN_SUMS(ew::DropoutEluBackward)
#undef GCNLAB_WRITTEN_COLUMN_SUMS
void bias_elu(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::BiasElu& f) { launch_2d(s, r, c, f); }
void bias_elu_dropout(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::BiasEluDropout& f) {
  launch_2d(s, r, c, f);
}
void edge_scores(cudaStream_t s, const RowWalk& w, const ew::EdgeScores& f) { walk(s, w, Elements<ew::EdgeScores>{f}); }
void edge_row_max(cudaStream_t s, const RowWalk& w, const ew::EdgeRowMax& f) { walk(s, w, RowMax{f}); }
void edge_exp_row_sum(cudaStream_t s, const RowWalk& w, const ew::EdgeExpRowSum& f) { walk(s, w, ExpRowSum{f}); }
void edge_scale_rows(cudaStream_t s, const RowWalk& w, const ew::EdgeScaleRows& f) {
  walk(s, w, Elements<ew::EdgeScaleRows>{f});
}
// Short rows in one visit; long rows' chunks pass by pass (their reductions need the combine).
void edge_softmax(cudaStream_t s, const RowWalk& w, const ew::EdgeSoftmax& f) {
  launch_short_rows(s, w, f.b.rowptr, SoftmaxRows{f});
  launch_long(s, w, Elements<ew::EdgeScores>{{f.b, f.src, f.dst, f.slope, f.e}});
  launch_long(s, w, RowMax{{f.b, f.e, f.max}});
  launch_long(s, w, ExpRowSum{{f.b, f.max, f.e, f.sum}});
  launch_long(s, w, Elements<ew::EdgeScaleRows>{{f.b, f.sum, f.e}});
}
void edge_dropout(cudaStream_t s, const RowWalk& w, const ew::EdgeDropout& f) { walk(s, w, Dropout{f}); }
void spmm_edges(cudaStream_t s, std::int64_t n, std::int64_t cols, const ew::SpmmEdges& f) { launch_2d(s, n, cols, f); }
void spmm_edges_mean(cudaStream_t s, std::int64_t n, std::int64_t cols, const ew::SpmmEdgesMean& f) {
  launch_2d(s, n, cols, f);
}
void spmm_edges_spread(cudaStream_t s, std::int64_t n, std::int64_t cols, const ew::SpmmEdgesSpread& f) {
  launch_2d(s, n, cols, f);
}
// The SDDMMs a lane per (edge, head), each the functor's ordered dot over the head's columns.
// Measured on an H200 (R-MAT 20, 4 x 32): 96 ms an epoch; a warp per edge with lanes over
// columns and a butterfly per head took 412 ms (a hub row's edges then run one after another).
void sddmm(cudaStream_t s, const RowWalk& w, const ew::Sddmm& f) { walk(s, w, Elements<ew::Sddmm>{f}); }
void sddmm_mean(cudaStream_t s, const RowWalk& w, const ew::SddmmMean& f) { walk(s, w, Elements<ew::SddmmMean>{f}); }
void edge_row_dot(cudaStream_t s, const RowWalk& w, const ew::EdgeRowDot& f) {
  walk(s, w, RowSums<ew::EdgeRowDot>{f});
}
void edge_softmax_backward(cudaStream_t s, const RowWalk& w, const ew::EdgeSoftmaxBackward& f) {
  walk(s, w, Elements<ew::EdgeSoftmaxBackward>{f});
}
void edge_row_sums(cudaStream_t s, const RowWalk& w, const ew::EdgeRowSums& f) {
  walk(s, w, RowSums<ew::EdgeRowSums>{f});
}
void edge_softmax_grad(cudaStream_t s, const RowWalk& w, const ew::EdgeSoftmaxGrad& f) {
  launch_short_rows(s, w, f.b.rowptr, SoftmaxGradRows{f});
  launch_long(s, w, RowSums<ew::EdgeRowDot>{{f.b, f.alpha, f.d, f.rowdot}});
  launch_long(s, w, Elements<ew::EdgeSoftmaxBackward>{{f.b, f.alpha, f.rowdot, f.src, f.dst, f.slope, f.d}});
  launch_long(s, w, RowSums<ew::EdgeRowSums>{{f.b, f.d, nullptr, f.dd}});
}
void head_dots(cudaStream_t s, std::int64_t rows, std::int64_t heads, const ew::HeadDots& f) {
  launch_2d(s, rows, heads, f);
}
void head_dots_adjoint(cudaStream_t s, std::int64_t rows, std::int64_t cols, const ew::HeadDotsAdjoint& f) {
  launch_2d(s, rows, cols, f);
}
void head_column_dots(cudaStream_t s, std::int64_t cols, const ew::HeadColumnDots& f, double* partial) {
  column_reduce(s, f.rows, cols, f, f.out, partial);
}
void row_sum_squares(cudaStream_t s, std::int64_t rows, const ew::RowSumSquares& f) { launch_1d(s, rows, f); }
void norm_relu_dropout_add(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::NormReluDropoutAdd& f) {
  launch_2d(s, r, c, f);
}
void norm_relu_dropout_backward(cudaStream_t s, std::int64_t r, std::int64_t c,
                                const ew::NormReluDropoutBackward& f) {
  launch_2d(s, r, c, f);
}
void norm_scale_gradient(cudaStream_t s, std::int64_t cols, const ew::NormScaleGradient& f, double* partial) {
  column_reduce(s, f.rows, cols, f, f.out, partial);
}
void norm_row_dot(cudaStream_t s, std::int64_t rows, const ew::NormRowDot& f) { launch_1d(s, rows, f); }
void norm_backward(cudaStream_t s, std::int64_t r, std::int64_t c, const ew::NormBackward& f) { launch_2d(s, r, c, f); }
void adam(cudaStream_t s, std::int64_t n, const ew::Adam& f) { launch_1d(s, n, f); }
void sgd(cudaStream_t s, std::int64_t n, const ew::Sgd& f) { launch_1d(s, n, f); }
void row_max(cudaStream_t s, std::int64_t rows, const ew::RowMax& f) { launch_1d(s, rows, f); }
void row_sum_exp(cudaStream_t s, std::int64_t rows, const ew::RowSumExp& f) { launch_1d(s, rows, f); }
void softmax_xent(cudaStream_t s, std::int64_t rows, const ew::SoftmaxXent& f, double* loss, int* correct,
                  int* counted) {
  launch_1d(s, rows, XentToArrays{f, loss, correct, counted});
}
namespace {
constexpr int kSumThreads = 256, kMaxSumBlocks = 512;

__global__ void xent_sums_kernel(std::int64_t rows, const double* loss, const int* correct, const int* counted,
                                 const std::uint8_t* split, double* out) {
  __shared__ double tree[kXentSums][kSumThreads];
  double v[kXentSums] = {};
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kSumThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kSumThreads + threadIdx.x; i < rows; i += stride) {
    const int k = split[i] & 3;
    v[0] += loss[i];
    v[1 + k] += correct[i];
    v[5 + k] += counted[i];
  }
  for (int j = 0; j < kXentSums; ++j) tree[j][threadIdx.x] = v[j];
  __syncthreads();
  for (int w = kSumThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w)
      for (int j = 0; j < kXentSums; ++j) tree[j][threadIdx.x] += tree[j][threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x < kXentSums) out[blockIdx.x * kXentSums + threadIdx.x] = tree[threadIdx.x][0];
}
}  // namespace

int xent_blocks(std::int64_t rows) {
  return static_cast<int>(std::clamp<std::int64_t>((rows + kSumThreads - 1) / kSumThreads, 1, kMaxSumBlocks));
}
void xent_block_sums(cudaStream_t s, std::int64_t rows, const double* loss, const int* correct, const int* counted,
                     const std::uint8_t* split, double* out) {
  xent_sums_kernel<<<xent_blocks(rows), kSumThreads, 0, s>>>(rows, loss, correct, counted, split, out);
  check_launch();
}
void narrow_offsets(cudaStream_t s, std::int64_t n, const std::int64_t* in, std::int32_t* out) {
  launch_1d(s, n, Narrow{in, out});
}
void spmm_rows(cudaStream_t s, std::int64_t stored, std::int64_t f, const std::int32_t* ids, const std::int64_t* rowptr,
               const std::int32_t* col, const float* val, const float* x, std::int64_t ldx, float* y,
               std::int64_t ldy) {
  launch_2d(s, stored, f, SpmmRows{ids, rowptr, col, val, x, ldx, y, ldy});
}
void scale(cudaStream_t s, std::int64_t rows, std::int64_t cols, float* y, std::int64_t ld, float beta) {
  launch_2d(s, rows, cols, Scale{y, ld, beta});
}

}  // namespace gcnlab::cuda

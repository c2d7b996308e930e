#pragma once
// GCNLAB_HD marks functions that must compile for host and device: the
// element-wise functors (common/backend/elementwise.hpp) and the RNG are
// written once and run both in the CPU backend's OpenMP loops and in the CUDA
// backend's kernels. This header is C++17-clean because nvcc includes it.

#if defined(__CUDACC__)
#define GCNLAB_HD __host__ __device__ __forceinline__
#define GCNLAB_HD_INLINE GCNLAB_HD
#else
#define GCNLAB_HD inline
// A small function that must inline into the host's loops for them to
// vectorise (GCC left the softmax's exp a call per element).
#define GCNLAB_HD_INLINE inline __attribute__((always_inline))
#endif

#pragma once
// bfloat16 as a storage and wire format (ScaleGNN Sec. V-B): the upper 16 bits
// of an IEEE fp32 (sign, 8 exponent bits, 7 mantissa bits), so that it covers
// fp32's range with 8 significant bits. gcnlab never computes in it: partial
// sums are cast to bf16 before an all-reduce and back to fp32 after it.
// Rounding is to nearest, ties to even (as __float2bfloat16_rn and PyTorch's
// .to(torch.bfloat16)); NaN stays NaN. C++17-clean: the element-wise functors
// that convert whole matrices run it on the host and in CUDA kernels.

#include <cstdint>
#include <cstring>

#include "common/core/hd.hpp"

namespace gcnlab {

struct bf16 {
  std::uint16_t bits;
};

GCNLAB_HD std::uint32_t bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

GCNLAB_HD float float_of(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

GCNLAB_HD bf16 to_bf16(float x) {
  const std::uint32_t u = bits_of(x);
  if ((u & 0x7fffffffu) > 0x7f800000u)  // NaN: keep it a (quiet) NaN, whatever its payload
    return bf16{static_cast<std::uint16_t>((u >> 16) | 0x0040u)};
  // Round to nearest even: add 0x7fff plus the lowest kept bit, then truncate.
  // Overflow of the largest finite values rounds to infinity, as it should.
  return bf16{static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}

GCNLAB_HD float to_float(bf16 x) { return float_of(static_cast<std::uint32_t>(x.bits) << 16); }

}  // namespace gcnlab

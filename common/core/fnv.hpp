#pragma once
// FNV-1a, 64 bits: a fingerprint of bytes (checkpoint files, datasets), not a
// cryptographic hash. Incremental: feed spans in order, read hex().

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace gcnlab {

class Fnv1a {
 public:
  Fnv1a& add(std::span<const std::byte> bytes) {
    for (std::byte b : bytes) h_ = (h_ ^ static_cast<std::uint64_t>(b)) * 0x100000001b3ull;
    return *this;
  }
  template <class T>
  Fnv1a& add_values(std::span<const T> values) { return add(std::as_bytes(values)); }
  Fnv1a& add(std::string_view s) { return add(std::as_bytes(std::span(s.data(), s.size()))); }
  std::string hex() const { return fmt::format("{:016x}", h_); }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace gcnlab

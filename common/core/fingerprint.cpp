#include "common/core/fingerprint.hpp"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t's size, for state()
#include <xxhash.h>

#include <cstring>

#include <fmt/format.h>

#include "common/core/error.hpp"

namespace gcnlab {

void Fingerprint::FreeState::operator()(XXH3_state_s* s) const { XXH3_freeState(s); }

Fingerprint::Fingerprint(Kind kind) : kind_(kind) {
  if (kind_ != Kind::xxh3) return;
  xxh3_.reset(XXH3_createState());
  GCNLAB_CHECK(xxh3_ && XXH3_64bits_reset(xxh3_.get()) == XXH_OK, "xxHash: cannot start a fingerprint");
}

Fingerprint& Fingerprint::add(std::span<const std::byte> bytes) {
  if (kind_ == Kind::xxh3) {
    GCNLAB_CHECK(XXH3_64bits_update(xxh3_.get(), bytes.data(), bytes.size()) == XXH_OK, "xxHash: update failed");
    return *this;
  }
  for (std::byte b : bytes) fnv_ = (fnv_ ^ static_cast<std::uint64_t>(b)) * 0x100000001b3ull;
  return *this;
}

std::string Fingerprint::hex() const {
  if (kind_ == Kind::xxh3) return fmt::format("xxh3:{:016x}", static_cast<std::uint64_t>(XXH3_64bits_digest(xxh3_.get())));
  return fmt::format("{:016x}", fnv_);
}

std::vector<std::byte> Fingerprint::state() const {
  std::vector<std::byte> s(kind_ == Kind::xxh3 ? sizeof(XXH3_state_t) : sizeof fnv_);
  std::memcpy(s.data(), kind_ == Kind::xxh3 ? static_cast<const void*>(xxh3_.get()) : &fnv_, s.size());
  return s;
}

void Fingerprint::restore(std::span<const std::byte> state) {
  GCNLAB_CHECK(state.size() == (kind_ == Kind::xxh3 ? sizeof(XXH3_state_t) : sizeof fnv_),
               "a fingerprint's state of {} bytes is not of this kind", state.size());
  if (kind_ != Kind::xxh3) {
    std::memcpy(&fnv_, state.data(), state.size());
    return;
  }
  // XXH3's one pointer, extSecret, points at the library's default secret: an
  // address of the process that made the bytes, so this process keeps its own.
  const unsigned char* const secret = xxh3_->extSecret;
  std::memcpy(static_cast<void*>(xxh3_.get()), state.data(), state.size());
  xxh3_->extSecret = secret;
}

Fingerprint::Kind Fingerprint::kind_of(std::string_view recorded) {
  const bool bare_hex = recorded.size() == 16 && recorded.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  return bare_hex ? Kind::fnv1a : Kind::xxh3;
}

}  // namespace gcnlab

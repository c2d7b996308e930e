#pragma once
// Fingerprints of bytes (datasets, checkpoint files): not cryptographic, a
// check that a run reads the data a checkpoint was written from and that a file
// is whole. Streamed: feed spans in order, then read hex().
//   xxh3   XXH3-64 (xxHash, Debian libxxhash-dev), "xxh3:" and 16 hex digits;
//          what gcnlab records.
//   fnv1a  FNV-1a 64, 16 hex digits: what gcnlab recorded before it used
//          xxHash, kept only to check fingerprints recorded so (checkpoints and
//          prepared directories written then); xxHash has no FNV-1a.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct XXH3_state_s;  // xxhash.h stays out of this header

namespace gcnlab {

class Fingerprint {
 public:
  enum class Kind { xxh3, fnv1a };
  explicit Fingerprint(Kind kind = Kind::xxh3);

  Fingerprint& add(std::span<const std::byte> bytes);
  template <class T>
  Fingerprint& add_values(std::span<const T> values) { return add(std::as_bytes(values)); }
  Fingerprint& add(std::string_view s) { return add(std::as_bytes(std::span(s.data(), s.size()))); }
  std::string hex() const;

  // The running state as bytes, and the same stream continued from such bytes
  // (same kind, same build): a stream fed in turn by the ranks that hold its
  // parts (`gcnlab prepare` across ranks) hashes as if one process fed it all.
  std::vector<std::byte> state() const;
  void restore(std::span<const std::byte> state);

  // The kind a recorded fingerprint was made with ("" or "xxh3:...": xxh3;
  // 16 bare hex digits: fnv1a).
  static Kind kind_of(std::string_view recorded);

 private:
  struct FreeState {
    void operator()(XXH3_state_s* s) const;
  };
  Kind kind_;
  std::unique_ptr<XXH3_state_s, FreeState> xxh3_;
  std::uint64_t fnv_ = 0xcbf29ce484222325ull;
};

}  // namespace gcnlab

#pragma once
// NumPy .npz archives, as numpy.savez / savez_compressed and
// scipy.sparse.save_npz write them (the Reddit release and OGB's largest
// datasets ship so): a zip of .npy members, stored or deflated, with the zip64
// records numpy writes (it forces them in every local header). A member is
// inflated in chunks and converted as it streams, so reading one costs its
// converted size plus a chunk, never the archive's.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gcnlab {

// An .npy header: dtype (numpy's descr, e.g. "<f4", "<i8", "|b1", "<f2",
// "|S3"), memory order and shape.
struct NpyHeader {
  std::string descr;
  bool fortran = false;
  std::vector<std::int64_t> shape;
  std::int64_t count() const;  // elements
};

class NpzArchive {
 public:
  explicit NpzArchive(std::string path);  // reads the central directory
  const std::string& path() const { return path_; }
  // Members by name without ".npy" ("feature" for feature.npy).
  bool has(const std::string& name) const { return members_.count(name) != 0; }
  std::vector<std::string> names() const;
  NpyHeader header(const std::string& name) const;
  // The elements of a numeric or boolean member (little-endian integers,
  // floats incl. float16, bool) converted to T, in C order (a Fortran-order
  // 2D member is transposed). T: float, double, std::int64_t.
  template <class T>
  std::vector<T> read(const std::string& name) const;
  // A bytes member (|S<k>): scipy's sparse format name ("csr", "coo", ...).
  std::string read_bytes(const std::string& name) const;

 private:
  struct Member {
    std::uint64_t header_offset = 0, compressed = 0, size = 0;
    std::uint32_t crc = 0;
    std::uint16_t method = 0;
  };
  // Streams the member's .npy bytes (inflated) to `sink`, chunk by chunk,
  // until `sink` returns false; a member streamed to its end is checked
  // against its recorded size and CRC-32.
  void stream(const std::string& name, const std::function<bool(const char*, std::size_t)>& sink) const;
  const Member& member(const std::string& name) const;

  std::string path_;
  std::map<std::string, Member> members_;
};

}  // namespace gcnlab

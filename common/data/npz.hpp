#pragma once
// NumPy .npz archives, as numpy.savez / savez_compressed and
// scipy.sparse.save_npz write them (the Reddit release and OGB's largest
// datasets ship so): a zip of .npy members, stored or deflated, with the zip64
// records numpy writes. The zip container is libzip's (Debian libzip-dev: zip64,
// inflating, the CRC-32 check); the .npy headers and element conversion are
// ours. A member is read in chunks and converted as it streams, so reading one
// costs its converted size plus a chunk, never the archive's.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

struct zip;       // libzip's archive handle (zip.h stays out of this header)
struct zip_file;  // and a member opened for reading

namespace gcnlab {

// An .npy header: dtype (numpy's descr, e.g. "<f4", "<i8", "|b1", "<f2",
// "|S3"), memory order and shape.
struct NpyHeader {
  std::string descr;
  bool fortran = false;
  std::vector<std::int64_t> shape;
  std::int64_t count() const;  // elements
};

class NpyCursor;

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
  // Streams the member's .npy bytes (inflated) to `sink`, chunk by chunk,
  // until `sink` returns false; libzip checks a member read to its end against
  // its recorded CRC-32.
  void stream(const std::string& name, const std::function<bool(const char*, std::size_t)>& sink) const;
  std::uint64_t index(const std::string& name) const;
  std::uint64_t inflated_size(const std::string& name) const;  // as the central directory records it

  std::string path_;
  struct Discard {  // zip_discard: the archive is only read
    void operator()(::zip* z) const;
  };
  std::unique_ptr<::zip, Discard> archive_;
  std::map<std::string, std::uint64_t> members_;  // name (without .npy) -> libzip's index
  friend class NpyCursor;
};

// One numeric member read element by element from any element on, for
// readers that hold a part of it (prepare across ranks): a stored member is
// read from the element's offset (libzip seeks in it), a deflated one is
// inflated from its start, and asked for an earlier element it starts over;
// reads in increasing order inflate it once. Elements in the file's order
// (Fortran order when header().fortran). For one thread; the archive must
// outlive it.
class NpyCursor {
 public:
  NpyCursor(const NpzArchive& archive, const std::string& name);
  ~NpyCursor();
  NpyCursor(const NpyCursor&) = delete;
  NpyCursor& operator=(const NpyCursor&) = delete;
  const NpyHeader& header() const { return header_; }
  bool stored() const { return stored_; }  // seekable
  // Elements [k, k + out.size()) converted to T (float, double, std::int64_t).
  template <class T>
  void read(std::int64_t k, std::span<T> out);

 private:
  void open();
  void seek(std::uint64_t byte);  // to a byte of the member's .npy
  void fill(char* out, std::size_t bytes);

  const NpzArchive& archive_;
  std::string name_, where_;
  std::uint64_t index_ = 0, data_ = 0, at_ = 0;  // libzip's index; the first element's byte; the next byte read
  NpyHeader header_;
  int kind_ = 0, size_ = 0;  // the dtype's kind and size
  bool stored_ = false;
  ::zip_file* file_ = nullptr;
  std::vector<char> bytes_;
};

}  // namespace gcnlab

#pragma once
// Line-by-line reading of plain or gzip-compressed text files (zlib reads
// both), with line numbers for error messages. Shared by the text loaders
// (Matrix Market, edge lists, OGB's CSV files).

#include <zlib.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <system_error>

#include "common/core/error.hpp"
#include "common/core/progress.hpp"

namespace gcnlab {

class LineReader {
 public:
  explicit LineReader(const std::string& path)
      : path_(path), file_(gzopen(path.c_str(), "rb")), progress_("reading " + path, file_mb(path), "MB", 1 << 20) {
    GCNLAB_CHECK(file_ != nullptr, "cannot open '{}': {}", path, std::strerror(errno));
    gzbuffer(file_, 1 << 20);
  }
  ~LineReader() {
    if (file_) gzclose(file_);
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its end-of-line characters; false at the end.
  bool next(std::string& line) {
    line.clear();
    char buf[4096];
    while (gzgets(file_, buf, sizeof buf)) {
      line += buf;
      if (!line.empty() && line.back() == '\n') break;
    }
    if (line.empty()) {
      int err = 0;
      const char* msg = gzerror(file_, &err);
      GCNLAB_CHECK(err == Z_OK || err == Z_STREAM_END, "error reading '{}': {}", path_, msg);
      return false;
    }
    // bytes of the (compressed) file read; gzoffset is a system call, so it is
    // asked every 4096 lines (Progress itself looks at the clock every 256 calls)
    if (++number_ % 4096 == 0) offset_ = static_cast<double>(gzoffset(file_));
    progress_.set(offset_);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return true;
  }
  long number() const { return number_; }
  const std::string& path() const { return path_; }
  // The offset, in the uncompressed text, of the next line's first byte.
  std::int64_t tell() const { return static_cast<std::int64_t>(gztell(file_)); }

 private:
  static double file_mb(const std::string& path) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    return ec ? 0.0 : static_cast<double>(bytes) / (1 << 20);
  }

  std::string path_;
  gzFile file_;
  long number_ = 0;
  double offset_ = 0;
  Progress progress_;
};

// Where a line is, for messages ("line 12", "byte 4096"): formatted only when
// a message is written, not for every line read.
struct LinePlace {
  const char* unit;
  std::int64_t at;
};

inline bool blank(const std::string& s) { return s.find_first_not_of(" \t") == std::string::npos; }
inline bool blank(const char* s) { return blank(std::string(s)); }

// Whether `path` is gzip-compressed: one stream, read from its start (not by byte ranges).
inline bool gzipped(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  GCNLAB_CHECK(in.good(), "cannot open '{}': {}", path, std::strerror(errno));
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return magic[0] == 0x1f && magic[1] == 0x8b;
}

// The lines of an uncompressed file that start in bytes [b0, b1), each handed
// to fn(line, at) without its end-of-line characters (at: its first byte). A
// line belongs to the range its first byte is in, so ranges that tile the file
// read every line once, whoever reads them (prepare across ranks).
using LineFn = std::function<void(const std::string& line, std::int64_t at)>;
inline void for_lines_in_bytes(const std::string& path, std::int64_t b0, std::int64_t b1, const LineFn& fn) {
  if (b0 >= b1) return;
  std::ifstream in(path, std::ios::binary);
  GCNLAB_CHECK(in.good(), "cannot open '{}': {}", path, std::strerror(errno));
  std::string line;
  in.seekg(b0 > 0 ? b0 - 1 : 0);
  if (b0 > 0 && in.get() != '\n') std::getline(in, line);  // the line that started before b0
  for (std::int64_t at = in.tellg(); in.good() && at < b1; at = in.tellg()) {
    if (!std::getline(in, line)) break;
    while (!line.empty() && line.back() == '\r') line.pop_back();
    fn(line, at);
  }
  GCNLAB_CHECK(!in.bad(), "error reading '{}'", path);
}

// Lines [k0, k1) (0-based) of a file read as one stream (plain or gzip), each
// handed to fn(line, k): a call continues where the last one stopped and
// starts the file over when asked for an earlier line, so calls in order read
// it once. Not for several threads at once.
class LineStream {
 public:
  explicit LineStream(std::string path) : path_(std::move(path)) {}
  void read(std::int64_t k0, std::int64_t k1, const LineFn& fn) {
    if (!in_ || k0 < in_->number()) in_ = std::make_unique<LineReader>(path_);
    std::string line;
    while (in_->number() < k0 && in_->next(line)) {
    }
    while (in_->number() < k1 && in_->next(line)) fn(line, in_->number() - 1);
  }
  // Lines in the file (one pass).
  static std::int64_t count(const std::string& path) {
    LineReader in(path);
    std::string line;
    while (in.next(line)) {
    }
    return in.number();
  }

 private:
  std::string path_;
  std::unique_ptr<LineReader> in_;
};

}  // namespace gcnlab

template <>
struct fmt::formatter<gcnlab::LinePlace> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(const gcnlab::LinePlace& p, Context& ctx) const {
    return fmt::format_to(ctx.out(), "{} {}", p.unit, p.at);
  }
};

#pragma once
// Line-by-line reading of plain or gzip-compressed text files (zlib reads
// both), with line numbers for error messages. Shared by the text loaders
// (Matrix Market, edge lists, OGB's CSV files).

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
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

inline bool blank(const std::string& s) { return s.find_first_not_of(" \t") == std::string::npos; }
inline bool blank(const char* s) { return blank(std::string(s)); }

}  // namespace gcnlab

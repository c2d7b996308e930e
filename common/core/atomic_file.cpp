#include "common/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/core/error.hpp"

namespace gcnlab {

namespace {

// fsync of a file or directory by path.
bool sync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0 || errno == EINVAL;  // some filesystems cannot sync directories
  ::close(fd);
  return ok;
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::ios::openmode mode)
    : path_(std::move(path)), tmp_(path_ + ".tmp-" + std::to_string(::getpid())) {
  out_.open(tmp_, mode | std::ios::out | std::ios::trunc);
  GCNLAB_CHECK(out_.good(), "cannot write '{}' ({})", path_, std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  std::remove(tmp_.c_str());
}

void AtomicFile::commit() {
  GCNLAB_ASSERT(!committed_);
  out_.flush();
  const bool written = out_.good();
  out_.close();
  GCNLAB_CHECK(written && !out_.fail(), "error writing '{}'", path_);
  GCNLAB_CHECK(sync_path(tmp_, O_RDONLY), "cannot sync '{}' ({})", path_, std::strerror(errno));
  GCNLAB_CHECK(std::rename(tmp_.c_str(), path_.c_str()) == 0, "cannot move '{}' into place ({})", path_,
               std::strerror(errno));
  committed_ = true;
  std::string dir = std::filesystem::path(path_).parent_path().string();
  sync_path(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY);  // the rename itself; best effort
}

void write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  f.stream() << text;
  f.commit();
}

}  // namespace gcnlab

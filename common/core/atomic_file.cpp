#include "common/core/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
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

// The rename itself; best effort.
void sync_parent(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  sync_path(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY);
}

// "<path>.tmp-<pid>" files that killed writers of `path` left beside it: those
// whose process no longer runs on this host (a live writer keeps its own).
void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  const std::string prefix = p.filename().string() + ".tmp-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) fs::remove(entry.path(), ec);
  }
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
  GCNLAB_CHECK(written && !out_.fail(), "error writing '{}' ({})", path_, std::strerror(errno));
  GCNLAB_CHECK(sync_path(tmp_, O_RDONLY), "cannot sync '{}' ({})", path_, std::strerror(errno));
  GCNLAB_CHECK(std::rename(tmp_.c_str(), path_.c_str()) == 0, "cannot move '{}' into place ({})", path_,
               std::strerror(errno));
  committed_ = true;
  sync_parent(path_);
  remove_stale_temporaries(path_);
}

namespace {
std::string part_temporary(const std::string& path) { return path + ".tmp-parts"; }
}  // namespace

void PartFile::create(const std::string& path, std::int64_t bytes) {
  const std::string tmp = part_temporary(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  GCNLAB_CHECK(fd >= 0, "cannot write '{}' ({})", path, std::strerror(errno));
  const bool sized = ::ftruncate(fd, static_cast<off_t>(bytes)) == 0;
  const int error = errno;
  ::close(fd);
  GCNLAB_CHECK(sized, "cannot size '{}' to {} bytes ({})", path, bytes, std::strerror(error));
}

void PartFile::commit(const std::string& path) {
  GCNLAB_CHECK(std::rename(part_temporary(path).c_str(), path.c_str()) == 0, "cannot move '{}' into place ({})", path,
               std::strerror(errno));
  sync_parent(path);
}

PartFile::PartFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(part_temporary(path_).c_str(), O_WRONLY);
  GCNLAB_CHECK(fd_ >= 0, "cannot write '{}' ({})", path_, std::strerror(errno));
}

PartFile::~PartFile() {
  if (fd_ >= 0) ::close(fd_);
}

void PartFile::write_at(std::int64_t at, const void* data, std::int64_t bytes) {
  const auto* p = static_cast<const char*>(data);
  for (std::int64_t done = 0; done < bytes && !failed_;) {
    const ssize_t put = ::pwrite(fd_, p + done, static_cast<std::size_t>(bytes - done), static_cast<off_t>(at + done));
    if (put <= 0) failed_ = true, error_ = put < 0 ? errno : ENOSPC;
    else done += put;
  }
}

void PartFile::close() {
  GCNLAB_ASSERT(fd_ >= 0);
  if (!failed_ && ::fsync(fd_) != 0) failed_ = true, error_ = errno;
  ::close(fd_);
  fd_ = -1;
  GCNLAB_CHECK(!failed_, "error writing '{}' ({})", path_, std::strerror(error_));
}

void write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  f.stream() << text;
  f.commit();
}

void commit_directory(const std::string& tmp, const std::string& path) {
  namespace fs = std::filesystem;
  GCNLAB_CHECK(sync_path(tmp, O_RDONLY | O_DIRECTORY), "cannot sync '{}' ({})", tmp, std::strerror(errno));
  std::error_code ec;
  if (fs::exists(path)) {  // rename(2) does not replace a non-empty directory
    const std::string old = path + ".old-" + std::to_string(::getpid());
    fs::rename(path, old, ec);
    GCNLAB_CHECK(!ec, "cannot move '{}' aside ({})", path, ec.message());
    fs::rename(tmp, path, ec);
    fs::remove_all(old);
  } else {
    fs::rename(tmp, path, ec);
  }
  GCNLAB_CHECK(!ec, "cannot move '{}' into place ({})", path, ec.message());
  sync_parent(path);
}

}  // namespace gcnlab

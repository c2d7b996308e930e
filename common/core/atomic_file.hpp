#pragma once
// A file that appears complete or not at all: written under a temporary name
// beside its destination ("<path>.tmp-<pid>"), then commit() flushes it,
// fsyncs it, renames it over the destination and fsyncs the directory. A run
// that fails or is killed before commit() leaves the previous file (if any)
// untouched and no partial one under the final name; the destructor removes
// an uncommitted temporary, and a commit removes the temporaries of `path`
// that killed writers left (their process no longer runs here).
//
//   AtomicFile f(path, std::ios::binary);
//   f.stream().write(...);
//   f.commit();  // one clear error naming `path` if anything failed

#include <cstdint>
#include <fstream>
#include <span>
#include <string>

namespace gcnlab {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path, std::ios::openmode mode = std::ios::out);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ofstream& stream() { return out_; }
  void commit();

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

// A file written in parts at their offsets, by one process or several (the
// ranks of `gcnlab prepare`, each writing the rows it holds): made at its full
// size under the temporary name "<path>.tmp-parts" (create), written by
// whoever opens it (write_at; close() fsyncs and reports any failure), and
// moved into place by its creator once every part is in (commit). Until then
// the destination is untouched and holds no partial file.
//
//   PartFile::create(path, bytes);          // one process
//   ... every writer: PartFile f(path); f.write_at(at, data, size); f.close();
//   PartFile::commit(path);                 // the creator, after every writer closed
class PartFile {
 public:
  static void create(const std::string& path, std::int64_t bytes);
  static void commit(const std::string& path);

  explicit PartFile(std::string path);  // opens the temporary for writing
  ~PartFile();
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  void write_at(std::int64_t at, const void* data, std::int64_t bytes);
  template <class T>
  void write_at(std::int64_t at, std::span<const T> items) {
    write_at(at, items.data(), static_cast<std::int64_t>(items.size_bytes()));
  }
  void close();

 private:
  std::string path_;
  int fd_ = -1;
  bool failed_ = false;
  int error_ = 0;
};

// `text` as the whole content of `path`, atomically.
void write_file_atomically(const std::string& path, const std::string& text);

// A directory whose files were all committed (AtomicFile) under the temporary
// name `tmp` becomes `path` in one rename (a previous `path` is replaced), and
// the parent directory is synced: readers see the whole directory or none of it.
void commit_directory(const std::string& tmp, const std::string& path);

}  // namespace gcnlab

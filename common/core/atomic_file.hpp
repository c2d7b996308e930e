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

#include <fstream>
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

// `text` as the whole content of `path`, atomically.
void write_file_atomically(const std::string& path, const std::string& text);

// A directory whose files were all committed (AtomicFile) under the temporary
// name `tmp` becomes `path` in one rename (a previous `path` is replaced), and
// the parent directory is synced: readers see the whole directory or none of it.
void commit_directory(const std::string& tmp, const std::string& path);

}  // namespace gcnlab

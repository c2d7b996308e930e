#pragma once
// Progress of long work (reading a large file, partitioning, writing shards)
// on stderr: a line every few seconds with how far it is, its rate and the
// time left, so that a run on a large graph does not sit silent for minutes.
// Off unless enabled (the CLI enables it on rank 0 unless --quiet); short work
// prints nothing. GCNLAB_PROGRESS_EVERY=S sets the seconds between lines (5).
//
//   Progress p("reading edges.csv.gz", bytes, "MB", 1e6);
//   while (...) p.set(bytes_read);          // or p.advance(1)
//   // destructor: "reading edges.csv.gz: done, 812 MB in 41.2 s"

#include <chrono>
#include <cstdint>
#include <string>

namespace gcnlab {

void enable_progress(bool on);
bool progress_enabled();

class Progress {
 public:
  // `total` in units of `scale` raw amounts (0: unknown, no ETA); announce:
  // print "what ..." at once (for work with no steps to report, e.g. one METIS call).
  Progress(std::string what, double total, std::string unit = "", double scale = 1, bool announce = false);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(double amount = 1) { set(done_ + amount); }
  // Cheap enough for inner loops: reads the clock once every 256 calls.
  void set(double done) {
    done_ = done;
    if (enabled_ && (++calls_ & 255) == 0) maybe_print();
  }

 private:
  using Clock = std::chrono::steady_clock;
  void maybe_print();

  std::string what_, unit_;
  double total_, scale_, done_ = 0;
  bool enabled_;
  bool printed_ = false;
  std::uint64_t calls_ = 0;
  Clock::time_point start_, last_;
};

}  // namespace gcnlab

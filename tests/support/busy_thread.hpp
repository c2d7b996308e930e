#pragma once
// Load beside a test: a thread spinning on arithmetic on the process's cores
// until destroyed (determinism under load, the PT-Scotch stress test).

#include <atomic>
#include <thread>

namespace gcnlab::test {

class BusyThread {
 public:
  BusyThread()
      : thread_([this] {
          volatile double x = 1;
          while (!stop_.load(std::memory_order_relaxed)) x = x * 1.0000001 + 1e-9;
        }) {}
  ~BusyThread() {
    stop_ = true;
    thread_.join();
  }
  BusyThread(const BusyThread&) = delete;
  BusyThread& operator=(const BusyThread&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace gcnlab::test

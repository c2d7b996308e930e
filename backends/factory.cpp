#include "backends/factory.hpp"

#include "backends/cpu/cpu_backend.hpp"

namespace gcnlab {

namespace {

std::unique_ptr<Backend> make_device_backend(const std::string& name, const BackendOptions& opts) {
  if (name == "cpu") return std::make_unique<CpuBackend>(opts);
  if (name == "cuda") return make_cuda_backend(opts);
  fail("unknown --backend '{}' (expected cpu or cuda)", name);
}

// The backend behind the counter, for what needs the device's own object (its stream).
Backend& device(Backend& backend) {
  auto* counting = dynamic_cast<CountingBackend*>(&backend);
  return counting ? counting->inner() : backend;
}

}  // namespace

std::unique_ptr<CountingBackend> make_backend(const std::string& name, const BackendOptions& opts) {
  return std::make_unique<CountingBackend>(make_device_backend(name, opts));
}

void attach_ledger(Backend& backend, Ledger& ledger) {
  ledger.set_sync([b = &backend] { b->sync(); });
  if (auto* counting = dynamic_cast<CountingBackend*>(&backend)) counting->count_into(&ledger);
  if (backend.name() == "cuda") {
    ledger.set_stopwatch(cuda_stopwatch(device(backend)));
    ledger.set_marker(nvtx_marker());
  }
}

std::unique_ptr<Communicator> make_device_communicator(Backend& backend, const MpiCommunicator& world) {
  if (backend.name() == "cuda") return make_nccl_communicator(device(backend), world);
  return nullptr;
}

}  // namespace gcnlab

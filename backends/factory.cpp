#include "backends/factory.hpp"

#include "backends/cpu/cpu_backend.hpp"

namespace gcnlab {

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opts) {
  if (name == "cpu") return std::make_unique<CpuBackend>(opts);
  if (name == "cuda") return make_cuda_backend(opts);
  fail("unknown --backend '{}' (expected cpu or cuda)", name);
}

void attach_ledger(Backend& backend, Ledger& ledger) {
  ledger.set_sync([b = &backend] { b->sync(); });
  if (backend.name() == "cuda") {
    ledger.set_stopwatch(cuda_stopwatch(backend));
    ledger.set_marker(nvtx_marker());
  }
}

std::unique_ptr<Communicator> make_device_communicator(Backend& backend, const MpiCommunicator& world) {
  if (backend.name() == "cuda") return make_nccl_communicator(backend, world);
  return nullptr;
}

}  // namespace gcnlab

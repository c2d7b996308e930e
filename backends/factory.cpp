#include "backends/factory.hpp"

#include "backends/cpu/cpu_backend.hpp"

#include <mpi-ext.h>  // Open MPI's MPIX_CUDA_AWARE_SUPPORT (absent macros elsewhere: staged)

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

std::unique_ptr<Communicator> make_device_communicator(Backend& backend, const MpiCommunicator& world,
                                                       const std::string& gpu_comm) {
  GCNLAB_CHECK(gpu_comm == "nccl" || gpu_comm == "mpi", "unknown --gpu-comm '{}' (expected nccl or mpi)", gpu_comm);
  if (gpu_comm == "nccl") return backend.name() == "cuda" ? make_nccl_communicator(device(backend), world) : nullptr;
  std::shared_ptr<Stager> stager = backend.name() == "cuda"
                                       ? make_cuda_stager(device(backend), mpi_device_transport() == "cuda-aware")
                                       : std::make_shared<HostStager>();
  MPI_Comm dup;
  GCNLAB_MPI(MPI_Comm_dup(world.native(), &dup));
  return std::make_unique<StagedCommunicator>(std::make_unique<MpiCommunicator>(dup, world.ledger(), true),
                                              std::move(stager));
}

std::string mpi_device_transport() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  if (MPIX_Query_cuda_support() == 1) return "cuda-aware";
#endif
  return "staged";
}

}  // namespace gcnlab

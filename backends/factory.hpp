#pragma once
// Backend and transport factories: the only place that knows which backends
// this build has. `--backend cuda` in a build without CUDA fails here with one
// clear message (backends/cuda_stub.cpp), as Ginkgo's device hooks do.

#include <functional>
#include <memory>
#include <string>

#include "backends/counting_backend.hpp"
#include "common/backend/backend.hpp"
#include "common/comm/mpi_communicator.hpp"

namespace gcnlab {

// The backend `name` ("cpu", "cuda"), wrapped in a CountingBackend (backends/counting_backend.hpp).
std::unique_ptr<CountingBackend> make_backend(const std::string& name, const BackendOptions& opts);

// The communicator strategies should use with `backend`: NCCL over `world`
// for the CUDA backend, null for the CPU backend (use `world` itself).
std::unique_ptr<Communicator> make_device_communicator(Backend& backend, const MpiCommunicator& world);

// Makes `ledger` time with `backend`: synchronise it before reading the host
// clock, and time compute scopes with device events where it has them; and
// count its kernels' work (made by make_backend).
void attach_ledger(Backend& backend, Ledger& ledger);

// Implemented by backends/cuda (or the stub when CUDA is off).
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts);
std::unique_ptr<Communicator> make_nccl_communicator(Backend& backend, const MpiCommunicator& world);
std::function<std::unique_ptr<Ledger::Stopwatch>()> cuda_stopwatch(Backend& backend);
// NVTX ranges named after the ledger's categories (CUDA builds; null otherwise).
std::shared_ptr<Ledger::Marker> nvtx_marker();

}  // namespace gcnlab

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
#include "common/comm/staged_communicator.hpp"

namespace gcnlab {

// The backend `name` ("cpu", "cuda"), wrapped in a CountingBackend (backends/counting_backend.hpp).
std::unique_ptr<CountingBackend> make_backend(const std::string& name, const BackendOptions& opts);

// The communicator strategies should use with `backend` (`gpu_comm`: --gpu-comm):
//   cuda, "nccl": NCCL over `world`;
//   cuda, "mpi":  MPI over a duplicate of `world`, device buffers staged through
//                 pinned host buffers, or handed to MPI as they are where it is
//                 CUDA-aware (common/comm/staged_communicator.hpp);
//   cpu, "mpi":   the same staged transport with memcpy for the device's copies
//                 (what the CPU tests check that transport with);
//   cpu, "nccl":  null (use `world` itself).
std::unique_ptr<Communicator> make_device_communicator(Backend& backend, const MpiCommunicator& world,
                                                       const std::string& gpu_comm = "nccl");

// How --gpu-comm mpi moves device buffers here: "staged" (pinned host buffers)
// or "cuda-aware" (the MPI library reads device memory: MPIX_Query_cuda_support).
std::string mpi_device_transport();

// Makes `ledger` time with `backend`: synchronise it before reading the host
// clock, and time compute scopes with device events where it has them; and
// count its kernels' work (made by make_backend).
void attach_ledger(Backend& backend, Ledger& ledger);

// Implemented by backends/cuda (or the stub when CUDA is off).
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts);
std::unique_ptr<Communicator> make_nccl_communicator(Backend& backend, const MpiCommunicator& world);
// The CUDA backend's Stager (its stream, pinned host memory; pass-through where MPI is CUDA-aware).
std::shared_ptr<Stager> make_cuda_stager(Backend& backend, bool cuda_aware);
std::function<std::unique_ptr<Ledger::Stopwatch>()> cuda_stopwatch(Backend& backend);
// NVTX ranges named after the ledger's categories (CUDA builds; null otherwise).
std::shared_ptr<Ledger::Marker> nvtx_marker();

}  // namespace gcnlab

// Built when GCNLAB_CUDA is OFF: the CUDA entry points fail with one message.

#include "backends/factory.hpp"

namespace gcnlab {

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions&) {
  fail("--backend cuda: this gcnlab was built without CUDA (configure with -DGCNLAB_CUDA=ON)");
}

std::unique_ptr<Communicator> make_nccl_communicator(Backend&, const MpiCommunicator&) {
  fail("NCCL: this gcnlab was built without CUDA (configure with -DGCNLAB_CUDA=ON)");
}

std::shared_ptr<Stager> make_cuda_stager(Backend&, bool) {
  fail("--gpu-comm mpi: this gcnlab was built without CUDA (configure with -DGCNLAB_CUDA=ON)");
}

std::function<std::unique_ptr<Ledger::Stopwatch>()> cuda_stopwatch(Backend&) { return {}; }

std::shared_ptr<Ledger::Marker> nvtx_marker() { return nullptr; }

}  // namespace gcnlab

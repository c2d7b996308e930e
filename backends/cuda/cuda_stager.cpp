// The CUDA backend's Stager for --gpu-comm mpi (common/comm/staged_communicator.hpp):
// copies on the backend's compute stream (ordered after the kernels that produced
// the input), into and out of pinned host memory, waited for before MPI reads or
// after it writes. Where MPI is CUDA-aware no pointer is staged: MPI reads device
// memory itself (after the stream's work so far has completed).

#include <cuda_runtime_api.h>

#include "backends/cuda/check.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/factory.hpp"

namespace gcnlab {

namespace {

class CudaStager final : public Stager {
 public:
  CudaStager(CudaBackend& backend, bool cuda_aware) : backend_(backend), cuda_aware_(cuda_aware) {}
  bool on_device(const void* p) const override {
    if (cuda_aware_) {  // MPI reads it where it is, once the kernels that wrote it are done
      backend_.sync();
      return false;
    }
    return is_device_pointer(p);
  }
  void* allocate_host(std::size_t bytes) override {
    void* p = nullptr;
    GCNLAB_CUDA_CALL(cudaMallocHost(&p, bytes));
    return p;
  }
  void free_host(void* p, std::size_t) override { cudaFreeHost(p); }
  void to_host(void* host, const void* device, std::size_t bytes) override {
    GCNLAB_CUDA_CALL(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, backend_.stream()));
  }
  void to_device(void* device, const void* host, std::size_t bytes) override {
    GCNLAB_CUDA_CALL(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, backend_.stream()));
  }
  void wait() override { GCNLAB_CUDA_CALL(cudaStreamSynchronize(backend_.stream())); }

 private:
  CudaBackend& backend_;
  bool cuda_aware_;
};

}  // namespace

std::shared_ptr<Stager> make_cuda_stager(Backend& backend, bool cuda_aware) {
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  GCNLAB_ASSERT(cuda != nullptr);
  return std::make_shared<CudaStager>(*cuda, cuda_aware);
}

}  // namespace gcnlab

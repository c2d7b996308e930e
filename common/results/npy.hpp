#pragma once
// NumPy .npy files (format 1.0) of 2D float32 C-order arrays: how weights
// leave and enter gcnlab (--weights-out / --weights-in) so that outside
// implementations (PyTorch, PyG) can be checked against it.

#include <cstdint>
#include <string>
#include <vector>

namespace gcnlab {

void write_npy(const std::string& path, std::int64_t rows, std::int64_t cols, const std::vector<float>& data);

struct NpyMatrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> data;
};
NpyMatrix read_npy(const std::string& path);

}  // namespace gcnlab

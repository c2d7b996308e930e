#pragma once
// NumPy .npy files (format 1.0) of 2D float32 C-order arrays: how weights
// leave and enter gcnlab (--weights-out / --weights-in) so that outside
// implementations (PyTorch, PyG) can be checked against it.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gcnlab {

void write_npy(const std::string& path, std::int64_t rows, std::int64_t cols, const std::vector<float>& data);

struct NpyMatrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> data;
};
NpyMatrix read_npy(const std::string& path);

// Row access to a large rows x cols array on disk (learned features in a
// checkpoint): create_npy makes the file at its full size (values zero), each
// writer puts columns [col0, col0 + cols) of the given rows in place, each reader
// takes the same of the rows it needs; neither holds more than its own rows.
void create_npy(const std::string& path, std::int64_t rows, std::int64_t cols);
NpyMatrix npy_shape(const std::string& path);  // rows and cols (no data), checked to be in the file
void write_npy_rows(const std::string& path, std::span<const std::int64_t> rows, std::int64_t col0, std::int64_t cols,
                    std::span<const float> values);
std::vector<float> read_npy_rows(const std::string& path, std::span<const std::int64_t> rows, std::int64_t col0,
                                 std::int64_t cols);

}  // namespace gcnlab

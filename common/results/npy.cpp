#include "common/results/npy.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/core/atomic_file.hpp"
#include "common/core/error.hpp"

namespace gcnlab {

namespace {

std::string npy_header(std::int64_t rows, std::int64_t cols) {
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", rows, cols);
  // magic(6) + version(2) + len(2) + header + '\n' padded to a multiple of 64
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header.push_back('\n');
  const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const std::uint16_t len = static_cast<std::uint16_t>(header.size());
  return std::string(magic, 8) + std::string(reinterpret_cast<const char*>(&len), 2) + header;
}

// The shape of `in`'s array, left at its first value; the values are checked to be in the file.
NpyMatrix read_shape(std::ifstream& in, const std::string& path) {
  GCNLAB_CHECK(in.good(), "cannot open '{}'", path);
  in.seekg(0, std::ios::end);
  const auto file_size = in.tellg();
  in.seekg(0);
  char magic[8] = {};
  in.read(magic, 8);
  GCNLAB_CHECK(in.gcount() == 8 && std::string(magic + 1, 5) == "NUMPY", "'{}' is not a .npy file", path);
  std::uint32_t len = 0;
  if (magic[6] == 1) {
    std::uint16_t l16 = 0;
    in.read(reinterpret_cast<char*>(&l16), 2);
    len = l16;
  } else {
    in.read(reinterpret_cast<char*>(&len), 4);
  }
  GCNLAB_CHECK(in.good() && len <= file_size - in.tellg(), "'{}' is truncated (its header claims {} bytes)", path, len);
  std::string header(len, '\0');
  in.read(header.data(), len);
  GCNLAB_CHECK(in.gcount() == static_cast<std::streamsize>(len), "'{}' is truncated", path);
  GCNLAB_CHECK(header.find("'<f4'") != std::string::npos, "'{}': expected float32 ('<f4') data", path);
  GCNLAB_CHECK(header.find("'fortran_order': False") != std::string::npos, "'{}': expected C order", path);
  // 'shape': (ROWS, COLS)
  NpyMatrix out;
  const auto key = header.find("'shape':");
  const auto open = header.find('(', key), close = header.find(')', open);
  GCNLAB_CHECK(key != std::string::npos && open != std::string::npos && close != std::string::npos,
               "'{}': malformed header", path);
  long long rows = -1, cols = -1;
  const int fields = std::sscanf(header.substr(open + 1, close - open - 1).c_str(), "%lld , %lld", &rows, &cols);
  GCNLAB_CHECK(fields == 2 && rows >= 0 && cols >= 0, "'{}': expected a 2D array", path);
  // the data must be in the file: checked before allocating (and without overflow)
  const long long available = static_cast<long long>(file_size - in.tellg());
  GCNLAB_CHECK(cols == 0 || rows <= available / 4 / cols, "'{}' is truncated: a {} x {} array needs more than its {} bytes",
               path, rows, cols, available);
  out.rows = rows;
  out.cols = cols;
  return out;
}

}  // namespace

void write_npy(const std::string& path, std::int64_t rows, std::int64_t cols, const std::vector<float>& data) {
  GCNLAB_ASSERT(static_cast<std::int64_t>(data.size()) == rows * cols);
  const std::string header = npy_header(rows, cols);
  AtomicFile file(path, std::ios::binary);
  std::ofstream& out = file.stream();
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  file.commit();
}

NpyMatrix read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  NpyMatrix out = read_shape(in, path);
  out.data.resize(static_cast<std::size_t>(out.rows * out.cols));
  in.read(reinterpret_cast<char*>(out.data.data()), static_cast<std::streamsize>(out.data.size() * 4));
  GCNLAB_CHECK(in.gcount() == static_cast<std::streamsize>(out.data.size() * 4), "'{}' is truncated", path);
  return out;
}

NpyMatrix npy_shape(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return read_shape(in, path);
}

void create_npy(const std::string& path, std::int64_t rows, std::int64_t cols) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::string header = npy_header(rows, cols);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    GCNLAB_CHECK(out.good(), "cannot write '{}'", path);
  }
  std::error_code ec;
  std::filesystem::resize_file(path, std::filesystem::file_size(path) + static_cast<std::uintmax_t>(rows * cols * 4), ec);
  GCNLAB_CHECK(!ec, "cannot size '{}' ({})", path, ec.message());
}

void write_npy_rows(const std::string& path, std::span<const std::int64_t> rows, std::int64_t col0, std::int64_t cols,
                    std::span<const float> values) {
  GCNLAB_ASSERT(values.size() == rows.size() * static_cast<std::size_t>(cols));
  std::ifstream probe(path, std::ios::binary);
  const NpyMatrix shape = read_shape(probe, path);
  const auto first = probe.tellg();
  GCNLAB_CHECK(col0 >= 0 && col0 + cols <= shape.cols, "'{}': columns [{}, {}) of a {}-column array", path, col0,
               col0 + cols, shape.cols);
  std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    GCNLAB_CHECK(rows[i] >= 0 && rows[i] < shape.rows, "'{}': row {} of {}", path, rows[i], shape.rows);
    out.seekp(first + static_cast<std::streamoff>((rows[i] * shape.cols + col0) * 4));
    out.write(reinterpret_cast<const char*>(values.data() + i * cols), static_cast<std::streamsize>(cols * 4));
  }
  out.flush();
  GCNLAB_CHECK(out.good(), "cannot write '{}'", path);
}

std::vector<float> read_npy_rows(const std::string& path, std::span<const std::int64_t> rows, std::int64_t col0,
                                 std::int64_t cols) {
  std::ifstream in(path, std::ios::binary);
  const NpyMatrix shape = read_shape(in, path);
  const auto first = in.tellg();
  GCNLAB_CHECK(col0 >= 0 && col0 + cols <= shape.cols, "'{}' has {} columns, [{}, {}) are needed", path, shape.cols,
               col0, col0 + cols);
  std::vector<float> out(rows.size() * static_cast<std::size_t>(cols));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    GCNLAB_CHECK(rows[i] >= 0 && rows[i] < shape.rows, "'{}' has {} rows, row {} is needed", path, shape.rows, rows[i]);
    in.seekg(first + static_cast<std::streamoff>((rows[i] * shape.cols + col0) * 4));
    in.read(reinterpret_cast<char*>(out.data() + i * cols), static_cast<std::streamsize>(cols * 4));
    GCNLAB_CHECK(in.gcount() == static_cast<std::streamsize>(cols * 4), "'{}' is truncated", path);
  }
  return out;
}

}  // namespace gcnlab

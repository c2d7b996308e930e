#include "common/results/npy.hpp"

#include <cstdio>
#include <fstream>

#include "common/core/atomic_file.hpp"
#include "common/core/error.hpp"

namespace gcnlab {

void write_npy(const std::string& path, std::int64_t rows, std::int64_t cols, const std::vector<float>& data) {
  GCNLAB_ASSERT(static_cast<std::int64_t>(data.size()) == rows * cols);
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", rows, cols);
  // magic(6) + version(2) + len(2) + header + '\n' padded to a multiple of 64
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header.push_back('\n');
  AtomicFile file(path, std::ios::binary);
  std::ofstream& out = file.stream();
  const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const std::uint16_t len = static_cast<std::uint16_t>(header.size());
  out.write(magic, 8);
  out.write(reinterpret_cast<const char*>(&len), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  file.commit();
}

NpyMatrix read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  GCNLAB_CHECK(in.good(), "cannot open '{}'", path);
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
  out.data.resize(static_cast<std::size_t>(out.rows * out.cols));
  in.read(reinterpret_cast<char*>(out.data.data()), static_cast<std::streamsize>(out.data.size() * 4));
  GCNLAB_CHECK(in.gcount() == static_cast<std::streamsize>(out.data.size() * 4), "'{}' is truncated", path);
  return out;
}

}  // namespace gcnlab

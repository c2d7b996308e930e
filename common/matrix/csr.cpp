#include "common/matrix/csr.hpp"

#include <limits>

namespace gcnlab {

namespace {
bool compress(std::int64_t rows, std::int64_t nonempty, RowStorage storage) {
  return storage == RowStorage::sparse_if_smaller && 12 * nonempty < 8 * rows;
}
}  // namespace

Csr upload(Allocator& a, const HostCsr& host, RowStorage storage) {
  GCNLAB_CHECK(host.cols <= std::numeric_limits<std::int32_t>::max(),
               "local sparse block has {} columns; local column ids must fit in 32 bits "
               "(use more ranks or a 2D/3D strategy)",
               host.cols);
  Csr m;
  m.rows = host.rows;
  m.cols = host.cols;
  m.nnz = host.nnz();
  std::int64_t nonempty = 0;
  for (std::int64_t r = 0; r < host.rows; ++r) nonempty += host.rowptr[r + 1] > host.rowptr[r];
  if (compress(host.rows, nonempty, storage)) {
    GCNLAB_CHECK(host.rows <= std::numeric_limits<std::int32_t>::max(),
                 "local sparse block has {} rows; compressed row ids must fit in 32 bits", host.rows);
    std::vector<std::int64_t> offsets{0};
    std::vector<std::int32_t> ids;
    offsets.reserve(static_cast<std::size_t>(nonempty) + 1);
    ids.reserve(static_cast<std::size_t>(nonempty));
    for (std::int64_t r = 0; r < host.rows; ++r)
      if (host.rowptr[r + 1] > host.rowptr[r]) {
        ids.push_back(static_cast<std::int32_t>(r));
        offsets.push_back(host.rowptr[r + 1]);
      }
    m.compressed = true;
    m.rowptr = make_buffer<std::int64_t>(a, offsets);
    m.row_ids = make_buffer<std::int32_t>(a, ids);
  } else {
    m.rowptr = make_buffer<std::int64_t>(a, host.rowptr);
  }
  std::vector<std::int32_t> col32(host.col.begin(), host.col.end());
  m.col = make_buffer<std::int32_t>(a, col32);
  m.val = make_buffer<float>(a, host.val);
  return m;
}

double csr_bytes(const Csr& a) {
  const double entries = static_cast<double>(a.nnz) * (sizeof(std::int32_t) + sizeof(float));
  const double rows = static_cast<double>(a.stored_rows());
  return entries + (rows + 1) * sizeof(std::int64_t) + (a.compressed ? rows * sizeof(std::int32_t) : 0.0);
}

}  // namespace gcnlab

#include "common/matrix/csr.hpp"

#include <limits>

namespace gcnlab {

Csr upload(Allocator& a, const HostCsr& host) {
  GCNLAB_CHECK(host.cols <= std::numeric_limits<std::int32_t>::max(),
               "local sparse block has {} columns; local column ids must fit in 32 bits "
               "(use more ranks or a 2D/3D strategy)",
               host.cols);
  Csr m;
  m.rows = host.rows;
  m.cols = host.cols;
  m.nnz = host.nnz();
  m.rowptr = make_buffer<std::int64_t>(a, host.rowptr);
  std::vector<std::int32_t> col32(host.col.begin(), host.col.end());
  m.col = make_buffer<std::int32_t>(a, col32);
  m.val = make_buffer<float>(a, host.val);
  return m;
}

}  // namespace gcnlab

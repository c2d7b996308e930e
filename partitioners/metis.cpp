// METIS k-way partitioning (Karypis & Kumar), through libmetis.

#include <metis.h>

#include <algorithm>
#include <limits>

#include "common/core/error.hpp"
#include "common/core/progress.hpp"
#include "partitioners/methods.hpp"

namespace gcnlab {

Partition metis_partition(const HostCsr& sym, int parts, std::uint64_t seed, double imbalance, bool minimise_volume,
                          const HostCsr* nnz_weights) {
  const std::int64_t n = sym.rows;
  Partition p;
  p.parts = parts;
  p.part.assign(n, 0);
  if (parts == 1) return p;
  GCNLAB_CHECK(n < std::numeric_limits<idx_t>::max() && sym.nnz() < std::numeric_limits<idx_t>::max(),
               "graph too large for this METIS build ({}-bit indices)", sizeof(idx_t) * 8);
  std::vector<idx_t> xadj(sym.rowptr.begin(), sym.rowptr.end()), adjncy(sym.col.begin(), sym.col.end());
  std::vector<idx_t> vwgt;
  if (nnz_weights)
    for (std::int64_t v = 0; v < n; ++v) vwgt.push_back(static_cast<idx_t>(nnz_weights->rowptr[v + 1] - nnz_weights->rowptr[v] + 1));
  idx_t nvtxs = static_cast<idx_t>(n), ncon = 1, nparts = parts, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % 1000003);
  options[METIS_OPTION_UFACTOR] = static_cast<idx_t>(imbalance * 1000);
  options[METIS_OPTION_OBJTYPE] = minimise_volume ? METIS_OBJTYPE_VOL : METIS_OBJTYPE_CUT;
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> part(n);
  // one call with nothing to report inside it: announced on large graphs, timed when it took long
  const Progress progress(fmt::format("METIS: {} vertices, {} edges into {} parts", n, sym.nnz(), parts), 0, "", 1,
                          /*announce=*/sym.nnz() > 5'000'000);
  const int rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.empty() ? nullptr : vwgt.data(),
                                     nullptr, nullptr, &nparts, nullptr, nullptr, options, &objval, part.data());
  GCNLAB_CHECK(rc == METIS_OK, "METIS_PartGraphKway failed (code {}) for {} parts", rc, parts);
  for (std::int64_t v = 0; v < n; ++v) p.part[v] = static_cast<std::int32_t>(part[v]);
  // METIS may leave a part empty on tiny or disconnected graphs: give it a vertex of the largest part.
  std::vector<std::int64_t> size(parts, 0);
  for (auto k : p.part) ++size[k];
  for (int k = 0; k < parts; ++k) {
    if (size[k] > 0) continue;
    const int big = static_cast<int>(std::max_element(size.begin(), size.end()) - size.begin());
    for (std::int64_t v = 0; v < n; ++v)
      if (p.part[v] == big) {
        p.part[v] = k, --size[big], ++size[k];
        break;
      }
  }
  return p;
}

}  // namespace gcnlab

#pragma once
// Partitioning methods that need more than a few lines (metis.cpp, volume.cpp).

#include "partitioners/partition.hpp"

namespace gcnlab {

// METIS k-way on a symmetric graph without self-loops. With `nnz_weights`,
// vertex weights are the row lengths of Â (balanced nonzeros); with
// `minimise_volume`, the objective is the total communication volume instead
// of the edge cut.
Partition metis_partition(const HostCsr& sym, int parts, std::uint64_t seed, double imbalance, bool minimise_volume,
                          const HostCsr* nnz_weights);

// Moves boundary vertices off the part with the largest send volume while
// the balance constraint holds (see volume.cpp).
Partition refine_max_send_volume(const HostCsr& sym, Partition p, double imbalance, int max_passes = 200);

}  // namespace gcnlab

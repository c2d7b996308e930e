#pragma once
// Where a run executes: the provenance
// (command line, versions, node shape, threads and binding) its results record.

#include <utility>

#include <nlohmann/json.hpp>

#include "common/comm/mpi_communicator.hpp"
#include "common/core/threads.hpp"

namespace gcnlab::cli {

// Where, when and how the run was made (results "provenance", the same on every rank but rank 0's recorded).
nlohmann::json provenance(const Communicator& world, int ranks_on_node, const ThreadChoice& threads,
                          const CpuPlacement& place);

}  // namespace gcnlab::cli

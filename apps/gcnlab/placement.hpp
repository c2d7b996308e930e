#pragma once
// Where a run executes: this rank's place on its node, and the provenance
// (command line, versions, node shape, threads and binding) its results record.

#include <utility>

#include <nlohmann/json.hpp>

#include "common/comm/mpi_communicator.hpp"
#include "common/core/threads.hpp"

namespace gcnlab::cli {

// This rank's place on its node: (index among the node's ranks, ranks on the node). Collective.
std::pair<int, int> node_position(const MpiCommunicator& world);

// Where, when and how the run was made (results "provenance", the same on every rank but rank 0's recorded).
nlohmann::json provenance(const Communicator& world, int ranks_on_node, const ThreadChoice& threads,
                          const CpuPlacement& place);

}  // namespace gcnlab::cli

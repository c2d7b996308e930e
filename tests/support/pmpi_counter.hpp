#pragma once
// An independent measurement of the bytes gcnlab asks MPI to move, below the
// Communicator and its Ledger: pmpi_counter.cpp defines the MPI collectives and
// point-to-point calls gcnlab uses (the MPI profiling interface), counts each
// call's bytes from its own arguments (counts, datatype sizes, communicator
// size and rank) under the wire convention of docs/design.md, and forwards to PMPI_*.
// It is linked into the test binaries only; the Ledger's per-category bytes are
// checked against it (tests/mpi/test_pmpi.cpp), so a volume that the
// Communicator mis-records, or records under the wrong category, fails.
//
//   call family   MPI calls                                       wire bytes received (this rank)
//   bcast         MPI_Bcast, MPI_Ibcast                           non-root: count·size
//   allreduce     MPI_Allreduce, MPI_Iallreduce                   2(p-1)/p · count·size
//   allgather     MPI_Allgather, MPI_Allgatherv                   the other ranks' contributions
//   reduce_scatter MPI_Reduce_scatter(_block)                     (p-1) · own output
//   alltoall      MPI_Alltoallv                                   Σ_{r≠me} recvcounts[r]·size
//   p2p           MPI_Irecv, MPI_Recv, MPI_Sendrecv              count·size from another rank

#include <array>
#include <cstdint>
#include <string_view>

namespace gcnlab::pmpi {

enum class Family : int { bcast, allreduce, allgather, reduce_scatter, alltoall, p2p, count };
inline constexpr int kNumFamilies = static_cast<int>(Family::count);
std::string_view to_string(Family f);

struct Counts {
  std::array<double, kNumFamilies> wire_bytes{};
  std::array<std::int64_t, kNumFamilies> calls{};
};

// This process's counts since the last reset (all communicators).
Counts snapshot();
void reset();
// Whether the interposition layer is linked into this binary.
bool linked();

}  // namespace gcnlab::pmpi

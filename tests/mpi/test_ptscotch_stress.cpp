// PT-Scotch under gcnlab's MPI thread level, repeated under load (issue 61).
//
// Debian's PT-Scotch 7 runs the two halves of each recursive-bipartitioning
// fold in two threads that both call MPI (kdgraphMapRbPartFold ->
// contextThreadLaunch -> dgraphInducePart -> MPI_Alltoallv) whenever its
// context has more than one thread, which needs MPI_THREAD_MULTIPLE; gcnlab
// initialises MPI_THREAD_FUNNELED, and such a run crashed inside Open MPI
// (free(): invalid pointer in ob1). ptscotch_partition binds the graph to a
// one-thread Scotch context, so that every MPI call comes from the calling
// thread. This repeats the partition with a busy thread beside every rank (time
// slices cut the calls where they interleave), and requires every repetition to
// finish and to give the first one's partition: with one thread Scotch's result
// is a fixed function of the graph, the seed and the rank count.

#include <mpi.h>

#include <catch2/catch.hpp>

#include "common/data/dataset.hpp"
#include "common/data/graph.hpp"
#include "partitioners/prepare.hpp"
#include "partitioners/ptscotch.hpp"
#include "tests/support/busy_thread.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

TEST_CASE("PT-Scotch repeated under load: no MPI call from a second thread, one partition", "[ptscotch][stress]") {
  constexpr int kRepeats = 20, kParts = 8;
  const Dataset data = load_dataset("rmat:scale=13,edge-factor=8,seed=2");
  const auto graph = prepare_graph(data, {}).graph;
  const BusyThread load;
  const PartitionBlock first = ptscotch_partition(*graph, kParts, 0.03, 1, MPI_COMM_WORLD);
  for (int rep = 1; rep < kRepeats; ++rep) {
    const PartitionBlock b = ptscotch_partition(*graph, kParts, 0.03, 1, MPI_COMM_WORLD);
    INFO("repetition " << rep << " on " << world_size() << " ranks");
    REQUIRE(b.edge_cut == first.edge_cut);
    REQUIRE(b.part == first.part);
  }
  const Partition p = gather_partition(*graph, first, kParts, MPI_COMM_WORLD);  // checks the parts on rank 0
  if (world_rank() == 0) CHECK(static_cast<std::int64_t>(p.part.size()) == data.nodes());
}

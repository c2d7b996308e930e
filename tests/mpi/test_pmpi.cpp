// The Ledger's bytes — what the Communicator records for each call — equal the
// bytes MPI was asked to move, counted from the MPI calls' own arguments by the
// profiling layer below it (tests/support/pmpi_counter.hpp), for every strategy
// at every grid the suite runs, over a whole run (setup, epochs, evaluation,
// report). With the model-equals-ledger tests this closes the loop: the model
// is checked against something it does not compute itself.

#include <utility>

#include <catch2/catch.hpp>
#include <fmt/ranges.h>

#include "tests/support/pmpi_counter.hpp"
#include "algorithms/registry.hpp"
#include "common/comm/process_grid.hpp"
#include "models/registry.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

namespace {

pmpi::Family family_of(Category c) {
  switch (c) {
    case Category::bcast_dense:
    case Category::bcast_sparse: return pmpi::Family::bcast;
    case Category::allreduce: return pmpi::Family::allreduce;
    case Category::allgather: return pmpi::Family::allgather;
    case Category::reduce_scatter: return pmpi::Family::reduce_scatter;
    case Category::alltoall: return pmpi::Family::alltoall;
    default: return pmpi::Family::p2p;
  }
}

void require_ledger_equals_mpi(const Ledger& ledger, const pmpi::Counts& mpi) {
  std::array<double, pmpi::kNumFamilies> bytes{};
  std::array<std::int64_t, pmpi::kNumFamilies> calls{};
  for (int c = 0; c < kNumCategories; ++c) {
    if (!is_communication(static_cast<Category>(c))) continue;
    const int f = static_cast<int>(family_of(static_cast<Category>(c)));
    bytes[f] += ledger.lifetime()[c].wire_bytes;
    calls[f] += ledger.lifetime()[c].calls;
  }
  // A personalised exchange is counted under its algorithm's category
  // (alltoall: sa-1d's MPI_Alltoallv, and a reshard's Communicator::exchange,
  // which goes out as one send and receive per peer): all-to-all and
  // point-to-point bytes are compared together.
  const auto alltoall = static_cast<int>(pmpi::Family::alltoall), p2p = static_cast<int>(pmpi::Family::p2p);
  std::array<double, pmpi::kNumFamilies> mpi_bytes = mpi.wire_bytes;
  bytes[p2p] += std::exchange(bytes[alltoall], 0.0);
  mpi_bytes[p2p] += std::exchange(mpi_bytes[alltoall], 0.0);
  for (int f = 0; f < pmpi::kNumFamilies; ++f) {
    INFO("rank " << world_rank() << " MPI call family " << pmpi::to_string(static_cast<pmpi::Family>(f)));
    CHECK(bytes[f] == Approx(mpi_bytes[f]).epsilon(1e-12).margin(1e-9));
    // one MPI call per collective (an exchange posts one receive per peer)
    if (f != p2p && f != alltoall) CHECK(calls[f] == mpi.calls[f]);
  }
}

RunSpec spec_for(const std::string& algo, const std::vector<int>& grid) {
  RunSpec s;
  s.algo = algo;
  s.grid = grid;
  s.model.layers = 3;
  s.model.hidden = 9;
  s.model.dropout = 0.5f;
  s.train.epochs = 2;
  return s;
}

}  // namespace

TEST_CASE("the ledger's bytes are what MPI was asked to move, for every strategy and grid", "[bytes][pmpi]") {
  REQUIRE(pmpi::linked());
  const Dataset data = load_dataset("sbm:nodes=601,classes=5,avg-degree=6,features=11,seed=4,directed=1");
  std::vector<RunSpec> specs;
  for (const StrategyInfo& info : strategies())  // every registered strategy, each grid of the job
    for (const auto& grid : job_grids(info.name, world_size())) {
      const std::string& algo = info.name;
      RunSpec s = spec_for(algo, grid);
      if (algo == "sa-1d" || algo == "sa-1.5d") s.partitioner = "metis";
      if (!info.caps.full_graph) s.train.batch_size = 200, s.train.eval_every = 1;  // 3 steps per epoch at D = 1
      if (algo == "plexus-3d") s.options["agg-blocks"] = "3";  // the nonblocking all-reduces
      specs.push_back(s);
      if (declares(algo, "dw-reduce")) {  // the other dW / softmax variant, blocked stages
        s.options["dw-reduce"] = s.options["softmax"] = "allreduce";
        s.options["block"] = "50";
        specs.push_back(s);
      }
      if (algo == "mggcn-1d") s.options["overlap"] = "off", specs.push_back(s);
      if (algo == "plexus-3d") s.comm_precision = "bf16", specs.push_back(s);  // 2-byte elements, user reduction
      if (grid != job_grids(algo, world_size()).front()) continue;
      for (const ModelInfo& m : models()) {  // every other model it runs, on its first grid
        if (m.name == "gcn" || !provides(info.caps, m.demands)) continue;
        RunSpec o = spec_for(algo, grid);
        o.model.name = m.name;
        o.model.train_eps = true;  // gin: its learned ε's all-reduce
        if (algo == "sa-1d" || algo == "sa-1.5d") o.partitioner = "metis";
        if (!info.caps.full_graph) o.train.batch_size = 200, o.train.eval_every = 1;
        if (declares(algo, "permutation")) o.options["permutation"] = "none";  // one vertex ordering
        specs.push_back(o);
        if (m.demands.attention && declares(algo, "elide")) o.options["elide"] = "off", specs.push_back(o);
      }
    }
  for (const RunSpec& spec : specs) {
    INFO("--model " << spec.model.name << " --algo " << spec.algo << " grid " << format_grid(spec.grid) << " options " << fmt::format("{}", spec.options) << " "
                   << spec.comm_precision);
    Job job(MPI_COMM_WORLD, spec);
    pmpi::reset();
    job.setup(data);
    job.train();
    require_ledger_equals_mpi(job.ledger(), pmpi::snapshot());
  }
}

TEST_CASE("the profiling layer counts an MPI call from its own arguments", "[pmpi]") {
  // a direct call, not made through a Communicator, shows up under its family and no other
  pmpi::reset();
  std::vector<float> v(10, 1.f);
  MPI_Allreduce(MPI_IN_PLACE, v.data(), 10, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const pmpi::Counts c = pmpi::snapshot();
  const int p = world_size();
  CHECK(c.wire_bytes[static_cast<int>(pmpi::Family::allreduce)] == Approx(p > 1 ? 2.0 * (p - 1) / p * 40 : 0.0));
  CHECK(c.calls[static_cast<int>(pmpi::Family::allreduce)] == 1);
  CHECK(c.wire_bytes[static_cast<int>(pmpi::Family::bcast)] == 0);
}

// Reproducibility (issue 35; the contract is in README "Reproducibility"): two
// runs of the same command, data, build, rank count, thread count and grid give
// the same bits — losses, accuracies, final weights and bytes — whatever else
// runs on the machine and wherever the allocator puts a buffer.
//
// For every registered strategy, every grid of this job's rank count at 1
// thread per rank and its first grid at 3: a run, then the same run perturbed
// in everything a run does not control —
//   (a) every backend buffer 8-56 bytes off its usual alignment, a different
//       offset each (Allocator::misalign_for_testing): a vectorised loop that
//       peels to alignment, or a BLAS that does, would round differently;
//   (b) a busy thread per rank on the same cores: OpenMP's and MPI's timing,
//       and any choice made by a clock, shift;
// compared bitwise. ctest also runs it with OPENBLAS_CORETYPE=Haswell
// (determinism_haswell): the Haswell/Zen kernels round the two dW GEMM orders
// differently where AVX-512 kernels do not, so an AVX-512 machine cannot hide
// what a Zen 3 shows. No strategy chooses by a clock: plexus-3d's --gemm-order
// auto is the backend's fixed rule, and "auto is the rule's order" below checks
// it is exactly the forced order, bit for bit.

#include <optional>

#include <catch2/catch.hpp>

#include "algorithms/registry.hpp"
#include "models/registry.hpp"
#include "common/comm/process_grid.hpp"
#include "tests/support/busy_thread.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

namespace {

const char* kData = "sbm:nodes=700,classes=5,avg-degree=8,features=16,seed=3";

RunSpec spec_for(const StrategyInfo& s, const std::vector<int>& grid, int threads) {
  RunSpec spec;
  spec.algo = s.name;
  spec.grid = grid;
  spec.threads = threads;
  spec.model.layers = 3;
  spec.model.hidden = 16;
  spec.model.dropout = 0.5f;
  spec.model.seed = 11;
  spec.train.epochs = 2;  // the second epoch's loss follows a backward pass and an update
  if (!s.caps.full_graph) spec.train.batch_size = 200, spec.train.eval_every = 1;
  return spec;
}

// The run with its buffers misaligned and a busy thread beside it (on rank 0: on
// an oversubscribed test machine one spinning thread already takes a core from
// the job; one per rank would only slow the suite).
RunResult perturbed(const RunSpec& spec, const Dataset& data) {
  RunSpec s = spec;
  s.misalign = true;
  std::optional<BusyThread> load;
  if (world_rank() == 0) load.emplace();
  return run(MPI_COMM_WORLD, s, data);
}

}  // namespace

TEST_CASE("two identical runs give the same bits, whatever the alignment of buffers and the load",
          "[determinism]") {
  Catch::StringMaker<double>::precision = 17;  // a difference in the last bit shows
  const Dataset data = load_dataset(kData);
  for (const StrategyInfo& s : strategies())  // every registered strategy, each grid of the job
    for (const auto& grid : job_grids(s.name, world_size()))
      for (const int threads : {1, 3}) {
        // Threads change only the local kernels, which are the same on every grid: 3 threads
        // on the strategy's first grid (the suite's time under load), 1 thread on all of them.
        if (threads > 1 && grid != job_grids(s.name, world_size()).front()) continue;
        INFO(s.name << " grid " << format_grid(grid) << ", " << threads << " thread(s) per rank");
        const RunSpec spec = spec_for(s, grid, threads);
        const RunResult first = run(MPI_COMM_WORLD, spec, data);
        require_bitwise_equal(first, perturbed(spec, data));
        if (grid != job_grids(s.name, world_size()).front()) continue;
        for (const ModelInfo& m : models()) {  // every other model it runs: RMSNorm, residuals, root terms, biases
          if (m.name == "gcn" || !provides(s.caps, m.demands)) continue;
          RunSpec other = spec;
          other.model.name = m.name;
          other.model.train_eps = true;  // gin: its learned ε's all-reduce too
          other.model.heads = 2;  // gat: two heads, and its attention dropout's keyed masks
          other.model.attention_dropout = 0.3f;
          if (declares(s.name, "permutation")) other.options["permutation"] = "none";  // one vertex ordering
          INFO("--model " << m.name);
          require_bitwise_equal(run(MPI_COMM_WORLD, other, data), perturbed(other, data));
        }
      }
}

TEST_CASE("--gemm-order auto is the backend's fixed order, bit for bit, never a timing", "[determinism]") {
  Catch::StringMaker<double>::precision = 17;
  const Dataset data = load_dataset(kData);
  for (const StrategyInfo& s : strategies()) {
    if (!declares(s.name, "gemm-order")) continue;
    const auto grids = job_grids(s.name, world_size());
    if (grids.empty()) continue;
    RunSpec spec = spec_for(s, grids.front(), 1);
    INFO(s.name << " grid " << format_grid(spec.grid));
    const RunResult chosen = perturbed(spec, data);  // auto, under load
    spec.options["gemm-order"] = "direct";           // the CPU backend's rule (Backend::prefers_reversed_tn_gemm)
    require_bitwise_equal(chosen, run(MPI_COMM_WORLD, spec, data));
  }
}

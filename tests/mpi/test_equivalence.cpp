// Every strategy computes the same model as `serial` (docs/testing.md
// contract): per-epoch loss within 1e-4 relative over >= 5 epochs and the
// final weights, with dropout off and on, on graphs whose n and feature
// widths no grid dimension divides, undirected and directed, for every grid
// shape the strategy accepts at this rank count.

#include <catch2/catch.hpp>

#include "algorithms/registry.hpp"
#include "common/comm/process_grid.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

namespace {

RunSpec spec_for(const std::string& algo, float dropout) {
  RunSpec s;
  s.algo = algo;
  s.model.layers = 3;
  s.model.hidden = 13;
  s.model.dropout = dropout;
  s.model.weight_decay = 5e-4f;
  s.model.seed = 7;
  s.train.epochs = 6;
  return s;
}

// n = 1001 and f = 19, 13, 5: no rank count 2..8 divides them all.
const char* kUndirected = "sbm:nodes=1001,classes=5,avg-degree=8,features=19,seed=3";
const char* kDirected = "sbm:nodes=1001,classes=5,avg-degree=6,features=19,seed=4,directed=1";

void check_all_grids(const std::string& algo, const std::vector<std::string>& partitioners = {"block", "random"}) {
  const int p = world_size();
  for (const char* dataset : {kUndirected, kDirected}) {
    const Dataset data = load_dataset(dataset);
    for (float dropout : {0.f, 0.5f}) {
      const RunResult serial = run(MPI_COMM_SELF, spec_for("serial", dropout), data);
      // The model is trained: the loss moves and the weights change.
      CHECK(serial.epochs.back().loss < serial.epochs.front().loss);
      CHECK(serial.final_weights[0] != serial.initial_weights[0]);
      for (const auto& grid : grids_for(algo, p))
        for (const std::string& partitioner : partitioners) {
          if (dropout == 0 && partitioner != partitioners.front()) continue;  // orderings: dropout on only
          INFO(algo << " grid " << format_grid(grid) << " on " << dataset << " dropout " << dropout << " partitioner "
                    << partitioner);
          RunSpec spec = spec_for(algo, dropout);
          spec.grid = grid;
          spec.partitioner = partitioner;
          require_same_model(serial, run(MPI_COMM_WORLD, spec, data));
          if (declares(algo, "block")) {  // SUMMA blocking: at most 97 vertices per stage,
            spec.options["block"] = "97";                         // with the non-CAGNET dW and softmax
            spec.options["dw-reduce"] = spec.options["softmax"] = "allreduce";
            require_same_model(serial, run(MPI_COMM_WORLD, spec, data));
          }
        }
    }
  }
}

// From the registry: a new strategy is covered without a test edit. Two test cases, one-axis
// grids and the rest, so that ctest can run them as parts of about equal time (tests/CMakeLists.txt).
void check_registered(bool (*select)(const StrategyInfo&)) {
  for (const StrategyInfo& s : strategies()) {
    if (!s.caps.full_graph || !distributed(s.name) || !select(s)) continue;  // scalegnn-4d: test_scalegnn.cpp
    INFO("strategy " << s.name);
    check_all_grids(s.name);
  }
}

}  // namespace

TEST_CASE("every registered block-row (one-axis grid) strategy matches serial on every grid it accepts",
          "[equivalence][rows]") {
  check_registered([](const StrategyInfo& s) { return s.grid_axes == 1; });
}
TEST_CASE("every registered strategy on a grid of two or more axes matches serial on every grid it accepts",
          "[equivalence][grids]") {
  check_registered([](const StrategyInfo& s) { return s.grid_axes > 1; });
}
TEST_CASE("sa-1d matches serial with every partitioner", "[equivalence][sa-1d]") {
  check_all_grids("sa-1d", {"block", "block-nnz", "random", "metis", "metis-nnz", "volume"});
}
TEST_CASE("sa-1.5d matches serial on every R x c grid with every partitioner", "[equivalence][sa-1.5d]") {
  check_all_grids("sa-1.5d", {"block", "block-nnz", "random", "metis", "metis-nnz", "volume"});
}
TEST_CASE("1d runs on a partitioner's unequal block rows", "[equivalence][1d]") {
  check_all_grids("1d", {"metis", "volume"});
}
TEST_CASE("mggcn-1d matches serial with overlap and shared buffers", "[equivalence][mggcn-1d]") {
  check_all_grids("mggcn-1d", {"random", "block", "metis"});
}
TEST_CASE("mggcn-1d matches serial without overlap and with learned features", "[equivalence][mggcn-1d]") {
  // the blocking rounds on the same buffers; the shared plan's dX_0 for trained features
  const Dataset data = load_dataset(kDirected);
  for (const bool learn : {false, true})
    for (float dropout : {0.f, 0.5f}) {
      RunSpec reference = spec_for("serial", dropout);
      reference.model.learn_features = learn;
      const RunResult serial = run(MPI_COMM_SELF, reference, data);
      for (const bool overlap : {false, true}) {
        INFO("overlap " << overlap << " learned features " << learn << " dropout " << dropout);
        RunSpec spec = reference;
        spec.algo = "mggcn-1d";
        spec.options["overlap"] = overlap ? "on" : "off";
        spec.partitioner = "random";
        require_same_model(serial, run(MPI_COMM_WORLD, spec, data));
      }
    }
}

TEST_CASE("2d and split-3d match serial in every dW / softmax variant, with learned features", "[equivalence][2d][split-3d]") {
  // layer 0's dX only exists with learned features: the dW SUMMA runs without its partial SUMMA otherwise
  const int p = world_size();
  const Dataset data = load_dataset(kDirected);
  RunSpec reference = spec_for("serial", 0.5f);
  reference.model.learn_features = true;
  const RunResult serial = run(MPI_COMM_SELF, reference, data);
  for (const std::string algo : {"2d", "split-3d"})
    for (const auto& grid : grids_for(algo, p))
      for (const char* dw : {"summa", "allreduce"})
        for (const char* softmax : {"allgather", "allreduce"}) {
          INFO(algo << " grid " << format_grid(grid) << " dw " << dw << " softmax " << softmax);
          RunSpec spec = reference;
          spec.algo = algo;
          spec.grid = grid;
          spec.options["dw-reduce"] = dw;
          spec.options["softmax"] = softmax;
          require_same_model(serial, run(MPI_COMM_WORLD, spec, data));
        }
}

TEST_CASE("the block-row strategies match serial in every product order", "[equivalence][order]") {
  // (ÂᵀX)W and Âᵀ(XW) per layer (--order), against serial in the other order
  const int p = world_size();
  for (const char* dataset : {kUndirected, kDirected}) {
    const Dataset data = load_dataset(dataset);
    RunSpec reference = spec_for("serial", 0.5f);
    reference.order = "aggregate";
    const RunResult serial = run(MPI_COMM_SELF, reference, data);
    for (const std::string& algo : strategies_with(&StrategyCaps::any_order))
      for (const auto& grid : job_grids(algo, p))  // serial: at p = 1
        for (const char* order : {"transform", "aggregate,transform,transform"}) {
          INFO(algo << " grid " << format_grid(grid) << " on " << dataset << " order " << order);
          RunSpec spec = spec_for(algo, 0.5f);
          spec.grid = grid;
          spec.order = order;
          const RunResult r = run(MPI_COMM_WORLD, spec, data);
          require_same_model(serial, r);
        }
  }
}

TEST_CASE("the directed test graph really is directed", "[equivalence]") {
  const Dataset d = load_dataset(kDirected);
  CHECK(d.directed);
  CHECK_FALSE(structurally_symmetric(d.adj));
}

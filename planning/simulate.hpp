#pragma once
// gcnlab simulate: what a strategy would do on P ranks — each rank's nonzeros,
// modelled wire bytes per category, analytic memory and kernels' work —
// computed on one machine by running the strategy's own distribution
// (Strategy::setup), model code (Trainer::byte_model, memory_need) and one
// training epoch traced (backends/counting_backend.hpp: every kernel counted,
// none run; the ThreadCommunicator's collectives meet but move nothing) on P
// threads. No second formula: at the rank counts that really ran, the result
// equals the run's per-rank model, measured bytes, nnz and the work its
// kernels were given (tested). Memory: the strategies' blocks and buffers and
// the trainer's buffers of all P ranks are allocated at once, but the traced
// epoch writes none of them, so a graph that fits one node simulates at any P.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/data/dataset.hpp"
#include "common/model/config.hpp"
#include "common/model/strategy.hpp"

namespace gcnlab {

struct SimulatedRank {
  std::vector<int> coords;
  std::int64_t nnz_local = 0;
  std::int64_t edges_local = 0;  // nonzeros of its attention edge tensors (graph attention; else nnz_local)
  ByteModel model;  // wire bytes per epoch, strategy + trainer (what train's results call model_wire_bytes)
  MemoryNeed memory;
  CategoryWork work;  // the kernels' work of one training epoch (the results' per_rank[].work)
};

struct Simulation {
  std::vector<int> grid;
  std::vector<std::int64_t> dims;
  std::string describe;  // rank 0's strategy description
  std::string permutation;  // the strategy's vertex permutation (its default when not given)
  nlohmann::json partition;
  std::vector<SimulatedRank> ranks;
};

// `partitioner` as train's --partitioner ("" = the strategy's default for an in-memory dataset).
Simulation simulate(const Dataset& data, const StrategyOptions& options, const ModelConfig& model, int ranks,
                    const std::string& partitioner = "");

// Schema gcnlab.simulate/1: config, per-rank rows, and max / mean / total per category.
nlohmann::json simulation_json(const Simulation& s, const StrategyOptions& options, const ModelConfig& model,
                               const std::string& dataset_spec);

}  // namespace gcnlab

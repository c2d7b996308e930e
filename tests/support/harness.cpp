#include "algorithms/registry.hpp"
#include "backends/factory.hpp"
#include "common/comm/node.hpp"
#include "models/registry.hpp"
#include "tests/support/harness.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "partitioners/prepare.hpp"

namespace gcnlab::test {

Job::Job(MPI_Comm comm, const RunSpec& spec) : spec_(spec) {
  comm_ = std::make_unique<MpiCommunicator>(comm, ledger_, /*owned=*/false);
  const NodeRanks node = node_ranks(comm);
  backend_ = make_backend(spec.backend, {spec.threads, node.local_rank, node.count, spec.gpu_comm == "mpi",
                                         node.nccl_host_ids});
  backend_->misalign_for_testing(spec.misalign);
  attach_ledger(*backend_, ledger_);
  device_comm_ = make_device_communicator(*backend_, *comm_, spec.gpu_comm);
  Communicator& c = device_comm_ ? *device_comm_ : *comm_;
  strategy_ = make_strategy(strategy_options(spec), {c, *backend_});
  model_ = make_model(spec.model.name);
  trainer_ = std::make_unique<Trainer>(*strategy_, *model_, c, *backend_, spec.model, spec.train);
}

void Job::setup(const Dataset& data, const Weights* initial) {
  trainer_->setup(data, *graph_for(data, *strategy_, spec_.partitioner, spec_.model.seed).graph, initial);
}

StrategyOptions strategy_options(const RunSpec& spec) {
  StrategyOptions opts;
  opts.algo = spec.algo;
  opts.grid = spec.grid;
  opts.order = spec.order;
  opts.options = spec.options;
  opts.comm_precision = spec.comm_precision;
  opts.dp_groups = spec.dp_groups;
  opts.learn_features = spec.model.learn_features;
  opts.model = model_info(spec.model.name).demands;
  opts.seed = spec.model.seed;
  opts.batch_size = spec.train.batch_size;
  return opts;
}

RunResult run(MPI_Comm comm, const RunSpec& spec, const Dataset& data) {
  Job job(comm, spec);
  job.setup(data);
  return job.train();
}

void require_same_model(const RunResult& reference, const RunResult& other, double rel, bool accuracy) {
  // a resumed run holds the reference's last epochs
  REQUIRE(other.epochs.size() >= 1);
  REQUIRE(other.epochs.size() <= reference.epochs.size());
  const std::size_t skip = reference.epochs.size() - other.epochs.size();
  for (std::size_t e = 0; e < other.epochs.size(); ++e) {
    const EpochMetrics& ref = reference.epochs[skip + e];
    INFO("epoch " << ref.epoch);
    REQUIRE(other.epochs[e].epoch == ref.epoch);
    CHECK(other.epochs[e].loss == Approx(ref.loss).epsilon(rel));
    if (accuracy) CHECK(other.epochs[e].train_acc == Approx(ref.train_acc).margin(2e-3));
  }
  REQUIRE(reference.final_weights.size() == other.final_weights.size());
  for (std::size_t l = 0; l < reference.final_weights.size(); ++l) {
    REQUIRE(reference.final_weights[l].size() == other.final_weights[l].size());
    double worst = 0;
    for (std::size_t k = 0; k < reference.final_weights[l].size(); ++k) {
      const double a = reference.final_weights[l][k], b = other.final_weights[l][k];
      worst = std::max(worst, std::abs(a - b) / (rel + rel * std::abs(a)));
    }
    INFO("layer " << l << ": worst |dW| / (rel + rel |W|) = " << worst);
    CHECK(worst <= 1.0);
  }
}

void require_bitwise_equal(const RunResult& a, const RunResult& b) {
  REQUIRE(a.epochs.size() == b.epochs.size());
  for (std::size_t e = 0; e < a.epochs.size(); ++e) {
    INFO("epoch " << a.epochs[e].epoch);
    CHECK(a.epochs[e].loss == b.epochs[e].loss);
    CHECK(a.epochs[e].train_acc == b.epochs[e].train_acc);
    CHECK(a.epochs[e].val_acc == b.epochs[e].val_acc);
    CHECK(a.epochs[e].test_acc == b.epochs[e].test_acc);
  }
  CHECK(a.final_weights == b.final_weights);
  REQUIRE(a.ranks.size() == b.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r)
    for (int c = 0; c < kNumCategories; ++c) {
      if (!is_communication(static_cast<Category>(c))) continue;
      INFO("rank " << r << " category " << to_string(static_cast<Category>(c)));
      CHECK(a.ranks[r].per_epoch[c].wire_bytes == b.ranks[r].per_epoch[c].wire_bytes);
      CHECK(a.ranks[r].per_epoch[c].calls == b.ranks[r].per_epoch[c].calls);
    }
}

namespace {
// Calls fn(rank report, category) for every rank and communication category.
template <class F>
void for_each_communication(const RunResult& r, F fn) {
  for (const RankReport& rr : r.ranks)
    for (int c = 0; c < kNumCategories; ++c)
      if (is_communication(static_cast<Category>(c))) fn(rr, c);
}
Approx model_bytes(const RankReport& rr, int c) { return Approx(rr.model[c]).epsilon(1e-12).margin(1e-9); }
}  // namespace

void require_measured_equals_model(const RunResult& r) {
  for_each_communication(r, [](const RankReport& rr, int c) {
    INFO("rank " << rr.rank << " category " << to_string(static_cast<Category>(c)));
    CHECK(rr.per_epoch[c].wire_bytes == model_bytes(rr, c));
  });
}

bool measured_equals_model(const RunResult& r) {
  bool equal = true;
  for_each_communication(r, [&](const RankReport& rr, int c) {
    equal = equal && rr.per_epoch[c].wire_bytes == model_bytes(rr, c);
  });
  return equal;
}

std::vector<std::vector<int>> grids_for(const std::string& algo, int p) { return strategy_info(algo).grids(p); }

bool distributed(const std::string& algo) {
  const auto grids = strategy_info(algo).grids(2);
  return !grids.empty() && std::accumulate(grids[0].begin(), grids[0].end(), 1, std::multiplies<>()) == 2;
}

bool declares(const std::string& algo, const std::string& option) {
  const auto& options = strategy_info(algo).options;
  return std::any_of(options.begin(), options.end(), [&](const StrategyOption& o) { return o.name == option; });
}

std::vector<std::vector<int>> job_grids(const std::string& algo, int p) {
  std::vector<std::vector<int>> out;
  for (auto& g : grids_for(algo, p))
    if (std::accumulate(g.begin(), g.end(), 1, std::multiplies<>()) == p) out.push_back(std::move(g));
  return out;
}

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

std::string error_message(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace gcnlab::test

// gcnlab plan: performance models (planning/perf_model.hpp, planning/plan.hpp).
//
//   gcnlab plan --dataset SPEC --ranks G [--machine NAME|FILE] [model options] [--out FILE.json]
//       every X x Y x Z grid of plexus-3d ranked by Plexus's model (Sec. 4)
//   gcnlab plan --dataset SPEC --ranks G --algo LIST|all [--machine NAME|FILE] [model and strategy options]
//       every grid of every listed strategy, from simulate's volumes, ranked
//   gcnlab plan --calibrate RUN.json... --out PROFILE.json [--name NAME] [--machine BASE]
//       fits a machine profile to measured runs (any strategy)
//   gcnlab plan --validate RUN.json... [--machine NAME|FILE] [--out FILE.json]
//       predicted vs measured epoch time of runs, Spearman rank correlation (Plexus Fig. 5)

#include <fstream>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "algorithms/registry.hpp"
#include "apps/gcnlab/commands.hpp"
#include "apps/gcnlab/run_options.hpp"
#include "common/comm/process_grid.hpp"
#include "common/core/atomic_file.hpp"
#include "common/core/json.hpp"
#include "common/data/dataset.hpp"
#include "common/model/config.hpp"
#include "models/registry.hpp"
#include "planning/perf_model.hpp"
#include "planning/plan.hpp"

namespace gcnlab::cli {

namespace {

using planning::Grid;
using planning::Observation;
using planning::Prediction;

std::string grid_text(const Grid& g) { return fmt::format("{}x{}x{}", g[0], g[1], g[2]); }

nlohmann::json read_json(const std::string& file) {
  std::ifstream in(file);
  GCNLAB_CHECK(in.good(), "cannot open '{}'", file);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail("'{}' is not valid JSON ({})", file, e.what());
  }
}

// A results file as a calibration / validation point.
Observation observation(const std::string& file) {
  const nlohmann::json j = read_json(file);
  GCNLAB_CHECK(j.value("schema", "") == "gcnlab.run/1", "'{}' is not a gcnlab results file", file);
  try {
    Observation o;
    o.label = file;
    o.algo = j.at("config").at("algo").get<std::string>();
    GCNLAB_CHECK(j.at("config").value("minibatch", nlohmann::json()).is_null(),
                 "'{}' is a mini-batch run; the models describe full-graph epochs", file);
    const auto& d = j.at("dataset");
    o.problem.n = json_get<std::int64_t>(d.at("nodes"));
    const auto nnz = json_get<std::int64_t>(d.at("nnz"));
    GCNLAB_CHECK(o.problem.n >= 1 && nnz >= 0 && nnz <= std::numeric_limits<std::int64_t>::max() - o.problem.n,
                 "'{}': {} vertices, {} edges", file, o.problem.n, nnz);
    // The run's model, rebuilt from its name, layers and widths: its layer kinds decide what the
    // performance models price (a linear layer has no SpMM; Plexus's model prices convolutions only).
    const auto& recorded = j.at("config").at("model");
    const auto dims = json_get<std::vector<std::int64_t>>(recorded.at("dims"));
    GCNLAB_CHECK(dims.size() >= 2, "'{}': malformed model dims", file);
    ModelConfig model;
    model.name = model_info(recorded.value("variant", "gcn")).name;
    model.layers = recorded.contains("layers") ? json_get<int>(recorded.at("layers")) : static_cast<int>(dims.size()) - 1;
    model.heads = recorded.value("heads", model.heads);  // absent: the default (results.cpp)
    model.concat = recorded.value("concat", model.concat);
    model.output_heads = recorded.value("output_heads", model.output_heads);
    GCNLAB_CHECK(model.heads >= 1 && model.output_heads >= 1, "'{}': malformed model heads", file);
    // GAT's hidden widths are its concatenated heads (models/gat: dims[l] = hidden · heads; averaged: hidden)
    model.hidden = model_info(model.name).demands.attention && model.concat && dims.size() > 2 ? dims[1] / model.heads
                                                                                                : dims[1];
    const Architecture arch = architecture(model, dims.front(), dims.back());
    GCNLAB_CHECK(arch.dims == dims, "'{}': --model {} with {} layers does not have the recorded widths", file,
                 model.name, model.layers);
    o.problem = planning::problem_of(o.problem.n, nnz + o.problem.n,  // Â = A + I
                                     arch, recorded.value("learn_features", false));
    o.run_grid = json_get<std::vector<int>>(j.at("config").at("grid"));
    if (strategy_info(o.algo).caps.perf_model) {
      const auto& grid = o.run_grid;
      GCNLAB_CHECK(grid.size() == 3, "'{}': grid is not X x Y x Z", file);
      o.grid = {grid[0], grid[1], grid[2]};
    }
    if (j.contains("provenance"))
      o.ranks_per_node = json_get<int>(j.at("provenance").value("ranks_per_node", nlohmann::json(0)));
    for (const auto& [name, c] : j.at("breakdown").items()) {
      const auto cat = category_from_string(name);
      if (cat == Category::spmm) o.spmm_s = c.at("time_max_s").get<double>();
      if (cat == Category::gemm) o.gemm_s = c.at("time_max_s").get<double>();
    }
    o.epoch_s = j.at("summary").at("epoch_time_s").get<double>();
    o.work = planning::epoch_work(o.problem, o.algo);
    double nnz_sum = 0;
    for (const auto& r : j.at("per_rank")) nnz_sum += r.at("nnz_local").get<double>();
    const double mean = nnz_sum / static_cast<double>(j.at("per_rank").size());
    for (const auto& r : j.at("per_rank")) {
      planning::RankLoad load;
      load.share = mean > 0 ? r.at("nnz_local").get<double>() / mean : 1;
      if (r.contains("edges_local") && mean > 0) load.edge_share = r.at("edges_local").get<double>() / mean;
      double comm = 0;
      for (const auto& [name, t] : r.at("time_s").items())
        if (const auto cat = category_from_string(name); cat && is_communication(*cat)) comm += t.get<double>();
      if (r.contains("model_link_bytes")) {
        const auto& link = r.at("model_link_bytes");
        load.link = {link.at("intra").get<double>(), link.at("inter_weighted").get<double>()};
      } else {  // written before the link split: one node
        for (const auto& [name, b] : r.at("model_wire_bytes").items()) load.link.intra += b.get<double>();
      }
      if (comm > o.comm_s) o.comm_s = comm, o.comm_rank = static_cast<int>(o.ranks.size());
      o.ranks.push_back(load);
    }
    return o;
  } catch (const nlohmann::json::exception& e) {
    fail("'{}' lacks a field the model needs ({})", file, e.what());
  }
}

nlohmann::json prediction_json(const Prediction& p) {
  return {{"grid", p.grid},       {"predicted_s", p.total_s()}, {"spmm_s", p.spmm_s},
          {"comm_s", p.comm_s},   {"comm_axis_s", p.comm_axis_s}, {"wire_bytes", p.wire_bytes}};
}

// --calibrate
std::string calibrate(const std::vector<Observation>& runs, const std::string& base, const std::string& name,
                      const std::string& out, int rank) {
  const auto m = planning::calibrate(runs, planning::machine_profile(base), name,
                                     fmt::format("gcnlab plan --calibrate on {} runs (base profile {})", runs.size(), base));
  if (rank == 0) write_file_atomically(out, planning::profile_json(m) + "\n");
  return fmt::format("profile {} from {} runs: bandwidth intra {:.3g} B/s, inter {:.3g} B/s, {} ranks per node; "
                     "spmm {:.3g} nnz*col/s, gemm {:.3g} flop/s; Eq. 4.4 k_flops {:.4g}, k_fwd {:.4g}, k_bwd {:.4g} "
                     "-> {}\n",
                     name, runs.size(), m.intra_bandwidth, m.inter_bandwidth, m.gpus_per_node, m.spmm_rate,
                     m.gemm_rate, m.k_flops, m.k_fwd, m.k_bwd, out);
}

// --validate: the strategy model for every run (from its own per-rank model
// bytes and nonzeros, what simulate would give), Plexus's for plexus-3d runs.
std::string validate(const std::vector<Observation>& runs, const std::string& machine, const std::optional<std::string>& out,
                     int rank) {
  const auto m = planning::machine_profile(machine);
  const bool rates = m.spmm_rate > 0 && m.gemm_rate > 0;
  std::vector<double> predicted, measured, plexus_predicted, plexus_measured;
  nlohmann::json points = nlohmann::json::array();
  std::string text = fmt::format("{:<10} {:<10} {:>13} {:>13} {:>12} {:>11} {:>11}  {}\n", "algo", "grid",
                                 "strategy ms", "Plexus ms", "measured ms", "pred. comm", "meas. comm", "run");
  for (const auto& r : runs) {
    nlohmann::json point = {{"run", r.label}, {"algo", r.algo}, {"measured_s", r.epoch_s},
                            {"measured_spmm_s", r.spmm_s}, {"measured_comm_s", r.comm_s}};
    std::string strategy_ms = "-", plexus_ms = "-";
    double comm_ms = 0;
    if (rates) {
      const auto t = planning::slowest_rank(r.ranks, r.work, m);
      predicted.push_back(t.total_s());
      measured.push_back(r.epoch_s);
      strategy_ms = fmt::format("{:.3f}", t.total_s() * 1e3);
      comm_ms = t.comm_s * 1e3;
      point["strategy_model_s"] = t.total_s();
      point["strategy_model_comm_s"] = t.comm_s;
    }
    if (strategy_info(r.algo).caps.perf_model) {
      const Prediction p = planning::predict(r.problem, r.grid, m);
      plexus_predicted.push_back(p.total_s());
      plexus_measured.push_back(r.epoch_s);
      plexus_ms = fmt::format("{:.3f}", p.total_s() * 1e3);
      point["plexus"] = prediction_json(p);
    }
    text += fmt::format("{:<10} {:<10} {:>13} {:>13} {:>12.3f} {:>11.3f} {:>11.3f}  {}\n", r.algo,
                        format_grid(r.run_grid), strategy_ms,
                        plexus_ms, r.epoch_s * 1e3, comm_ms, r.comm_s * 1e3, r.label);
    points.push_back(point);
  }
  nlohmann::json j = {{"schema", "gcnlab.plan-validation/1"}, {"machine", m.name}, {"points", points}};
  if (rates) {
    const double rho = planning::spearman(predicted, measured);
    text += fmt::format("strategy model: Spearman {:.3f} over {} runs, machine {}\n", rho, runs.size(), m.name);
    j["spearman"] = rho;
  } else {
    text += fmt::format("machine {} has no kernel rates: only plexus-3d runs are predicted\n", m.name);
  }
  if (!plexus_predicted.empty()) {
    const double rho = planning::spearman(plexus_predicted, plexus_measured);
    text += fmt::format("Plexus's model (plexus-3d runs): Spearman {:.3f} over {} runs\n", rho, plexus_predicted.size());
    j["plexus_spearman"] = rho;
  }
  if (out && rank == 0) write_file_atomically(*out, j.dump(1) + "\n");
  return text;
}

// --algo LIST|all: every grid of every strategy, from simulate's volumes.
std::string compare(const Dataset& data, const std::string& algo_list, const StrategyOptions& base,
                    const ModelConfig& model, int ranks, const planning::MachineProfile& m,
                    const std::optional<std::string>& out, int rank) {
  std::vector<std::string> algos;
  if (algo_list == "all") {
    algos = strategies_with(&StrategyCaps::plan);
  } else {
    for (std::size_t at = 0; at <= algo_list.size();) {
      const std::size_t comma = std::min(algo_list.find(',', at), algo_list.size());
      algos.push_back(algo_list.substr(at, comma - at));
      at = comma + 1;
    }
  }
  std::vector<std::string> refused;
  const auto ranked = planning::compare_strategies(data, algos, base, model, ranks, m, &refused);
  GCNLAB_CHECK(!ranked.empty(), "no grid of {} ranks is accepted by {} on {} vertices:\n  {}", ranks,
               fmt::join(algos, ", "), data.nodes(), fmt::join(refused, "\n  "));
  const auto dims = architecture(model, data.features, data.classes).dims;
  std::string text = fmt::format(
      "strategies on {} ranks: {} ({} nodes, {} nnz of Â), dims {}, machine {} ({} ranks per node)\n"
      "{:>4} {:<10} {:<10} {:>11} {:>11} {:>11} {:>10} {:>10} {:>8} {:>10}\n",
      ranks, data.name, data.nodes(), data.nnz() + data.nodes(), fmt::join(dims, "-"), m.name, m.gpus_per_node, "rank",
      "algo", "grid", "epoch ms", "compute ms", "comm ms", "MiB/rank", "inter MiB", "nnz imb", "mem MiB");
  nlohmann::json j = {{"schema", "gcnlab.plan-strategies/1"},
                      {"dataset", data.spec},
                      {"ranks", ranks},
                      {"machine", m.name},
                      {"gpus_per_node", m.gpus_per_node},
                      {"dims", dims},
                      {"refused", refused},
                      {"strategies", nlohmann::json::array()}};
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const planning::StrategyPrediction& q = ranked[i];
    text += fmt::format("{:>4} {:<10} {:<10} {:>11.3f} {:>11.3f} {:>11.3f} {:>10.2f} {:>10.2f} {:>8.3f} {:>10.1f}\n",
                        i + 1, q.algo, format_grid(q.grid), q.total_s() * 1e3, q.compute_s * 1e3, q.comm_s * 1e3,
                        q.wire_bytes_max / (1 << 20), q.inter_bytes_max / (1 << 20), q.nnz_imbalance,
                        q.memory_max / (1 << 20));
    j["strategies"].push_back({{"algo", q.algo},
                               {"grid", q.grid},
                               {"predicted_s", q.total_s()},
                               {"compute_s", q.compute_s},
                               {"comm_s", q.comm_s},
                               {"slowest_rank", q.slowest_rank},
                               {"wire_bytes_max", q.wire_bytes_max},
                               {"inter_bytes_max", q.inter_bytes_max},
                               {"nnz_max_over_mean", q.nnz_imbalance},
                               {"memory_need_max", q.memory_max}});
  }
  if (!refused.empty()) text += fmt::format("{} grid(s) refused by their strategy (listed in the JSON)\n", refused.size());
  if (out && rank == 0) write_file_atomically(*out, j.dump(1) + "\n");
  return text;
}

}  // namespace

std::vector<int> auto_grid(const Dataset& data, const ModelConfig& model, int ranks, const std::string& machine) {
  const planning::Problem p = planning::problem_of(data.nodes(), data.nnz() + data.nodes(),
                                                  architecture(model, data.features, data.classes), model.learn_features);
  const auto ranked = planning::rank_grids(p, ranks, planning::machine_profile(machine));
  GCNLAB_CHECK(!ranked.empty(), "--grid auto: no grid of {} ranks fits {} vertices", ranks, data.nodes());
  const Grid& g = ranked.front().grid;
  return {g[0], g[1], g[2]};
}

int plan(Args& args, MpiCommunicator& world) {
  std::string text;
  collectively(world, [&] {
    const auto calibrate_wanted = args.flag("--calibrate");
    const auto validate_wanted = args.flag("--validate");
    const std::string machine = args.value_or("--machine", "local");
    const auto out = args.value("--out");
    if (calibrate_wanted || validate_wanted) {
      GCNLAB_CHECK(!(calibrate_wanted && validate_wanted), "plan takes --calibrate or --validate, not both");
      const std::string name = args.value_or("--name", "calibrated");
      const auto files = args.positional();
      args.finish();
      GCNLAB_CHECK(!files.empty(), "plan {} needs results files", calibrate_wanted ? "--calibrate" : "--validate");
      std::vector<Observation> runs;
      for (const auto& f : files) runs.push_back(observation(f));
      if (calibrate_wanted) {
        GCNLAB_CHECK(out.has_value(), "plan --calibrate needs --out PROFILE.json");
        text = calibrate(runs, machine, name, *out, world.rank());
      } else {
        text = validate(runs, machine, out, world.rank());
      }
      return;
    }

    const std::string spec = args.value_or("--dataset", "");
    GCNLAB_CHECK(!spec.empty(), "plan needs --dataset SPEC and --ranks G (or --calibrate / --validate)");
    const int ranks = static_cast<int>(args.integer("--ranks", 0, 1));
    GCNLAB_CHECK(ranks >= 1, "plan needs --ranks G");
    const auto algo_list = args.value("--algo");
    StrategyOptions base;
    if (algo_list) {
      GCNLAB_CHECK(world.size() == 1, "plan --algo simulates its ranks as threads: run it without mpirun");
      GCNLAB_CHECK(ranks <= 4096, "plan --algo simulates at most 4096 ranks (got {})", ranks);
      base = read_strategy_options(args, "plan");
      base.options.try_emplace("gemm-order", "direct");  // no GEMM timing: bytes do not depend on it
    }
    const ModelConfig model = read_model_config(args);
    base.learn_features = model.learn_features;
    base.model = model_info(model.name).demands;
    base.seed = model.seed;
    args.finish();
    const auto m = planning::machine_profile(machine);
    const Dataset data = load_dataset(spec);
    if (algo_list) {
      text = compare(data, *algo_list, base, model, ranks, m, out, world.rank());
      return;
    }
    const planning::Problem p = planning::problem_of(data.nodes(), data.nnz() + data.nodes(),
                                                    architecture(model, data.features, data.classes), model.learn_features);
    const auto ranked = planning::rank_grids(p, ranks, m);
    GCNLAB_CHECK(!ranked.empty(), "no grid of {} ranks fits {} vertices", ranks, data.nodes());
    text = fmt::format("plexus-3d plan: {} ({} nodes, {} nnz of Â), dims {}, {} ranks, machine {}\n"
                       "{:>4} {:<10} {:>12} {:>10} {:>10} {:>9} {:>9} {:>9} {:>12}\n",
                       data.name, p.n, p.nnz, fmt::join(p.dims, "-"), ranks, m.name, "rank", "grid", "epoch ms",
                       "spmm ms", "comm ms", "x ms", "y ms", "z ms", "MiB/rank");
    nlohmann::json j = {{"schema", "gcnlab.plan/1"}, {"dataset", data.spec}, {"ranks", ranks},
                        {"machine", m.name},         {"dims", p.dims},      {"grids", nlohmann::json::array()}};
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      const Prediction& q = ranked[i];
      text += fmt::format("{:>4} {:<10} {:>12.3f} {:>10.3f} {:>10.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>12.2f}\n", i + 1,
                          grid_text(q.grid), q.total_s() * 1e3, q.spmm_s * 1e3, q.comm_s * 1e3, q.comm_axis_s[0] * 1e3,
                          q.comm_axis_s[1] * 1e3, q.comm_axis_s[2] * 1e3, q.wire_bytes / (1 << 20));
      j["grids"].push_back(prediction_json(q));
    }
    text += fmt::format("--grid auto picks {}\n", grid_text(ranked.front().grid));
    if (out && world.rank() == 0) write_file_atomically(*out, j.dump(1) + "\n");
  });
  if (world.rank() == 0) fmt::print("{}", text);
  return 0;
}

}  // namespace gcnlab::cli

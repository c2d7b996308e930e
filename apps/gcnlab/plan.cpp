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
#include <numeric>
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

// Ranks per core of a run: its ranks on a node times their threads over the node's cores (at least 1).
double sharing(const nlohmann::json& j, const std::string& file) {
  const auto& prov = j.value("provenance", nlohmann::json::object());
  const double ranks = prov.value("ranks_per_node", 1.0), cores = prov.value("cores_per_node", 0.0);
  const double threads = j.at("config").value("threads", 1.0);
  GCNLAB_CHECK(ranks >= 1 && threads >= 1 && cores >= 0, "'{}': malformed provenance (ranks, threads, cores)", file);
  return cores > 0 ? std::max(1.0, ranks * threads / cores) : 1.0;
}

// A rank's modelled bytes by link and communication category (per_rank[].model_link_bytes). Files written
// before the split by category: each link's total in the proportions of model_wire_bytes (exact on one node);
// before the split by link: one node.
LinkBytes link_bytes_of(const nlohmann::json& r, const std::string& file) {
  const auto per_category = [&](const nlohmann::json& bytes) {
    std::array<double, kNumCategories> out{};
    for (const auto& [name, b] : bytes.items()) {
      const auto c = category_from_string(name);
      GCNLAB_CHECK(c.has_value(), "'{}': unknown communication category {}", file, name);
      out[static_cast<std::size_t>(*c)] = b.get<double>();
    }
    return out;
  };
  LinkBytes link;
  if (r.contains("model_link_bytes") && r.at("model_link_bytes").contains("intra_by_category")) {
    link.intra = per_category(r.at("model_link_bytes").at("intra_by_category"));
    link.inter_weighted = per_category(r.at("model_link_bytes").at("inter_weighted_by_category"));
    return link;
  }
  const auto wire = per_category(r.at("model_wire_bytes"));
  if (!r.contains("model_link_bytes")) return link.intra = wire, link;
  const auto& m = r.at("model_link_bytes");
  const double wire_total = std::accumulate(wire.begin(), wire.end(), 0.0);
  for (int c = 0; c < kNumCategories; ++c) {
    const double share = wire_total > 0 ? wire[static_cast<std::size_t>(c)] / wire_total : 0.0;
    link.intra[static_cast<std::size_t>(c)] = m.at("intra").get<double>() * share;
    link.inter_weighted[static_cast<std::size_t>(c)] = m.at("inter_weighted").get<double>() * share;
  }
  return link;
}

// Every rank's measured times and traced work (per_rank[].work) and its modelled bytes by link.
void read_ranks(const nlohmann::json& per_rank, const std::string& file, Observation& o) {
  double most_compute = -1;
  for (const auto& r : per_rank) {
    GCNLAB_CHECK(r.contains("work"), "'{}' has no per-rank kernel work (written before gcnlab counted it): rerun it",
                 file);
    CategoryWork work{};
    for (const auto& [cat, kinds] : r.at("work").items())
      for (const auto& [kind, w] : kinds.items()) {
        const auto c = category_from_string(cat);
        const auto k = kernel_from_string(kind);
        GCNLAB_CHECK(c && k, "'{}': unknown work entry {}.{}", file, cat, kind);
        work[static_cast<int>(*c)][static_cast<int>(*k)] = {w.at("amount").get<double>(), w.at("calls").get<std::int64_t>(),
                                                             w.value("nonzeros", 0.0), w.value("row_elements", 0.0),
                                                             w.value("bytes", 0.0)};
      }
    std::array<double, kNumCategories> times{};
    double comm = 0, compute = 0;
    for (const auto& [name, t] : r.at("time_s").items())
      if (const auto cat = category_from_string(name)) {
        times[static_cast<int>(*cat)] = t.get<double>();
        if (is_communication(*cat)) comm += t.get<double>();
        else if (*cat != Category::other) compute += t.get<double>();
      }
    if (compute > most_compute) most_compute = compute, o.comm_s = comm, o.comm_rank = static_cast<int>(o.ranks.size());
    o.ranks.push_back({planning::by_kind(work), link_bytes_of(r, file)});
    o.work.push_back(work);
    o.times.push_back(times);
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
    for (const auto& [name, c] : j.at("breakdown").items())
      if (category_from_string(name) == Category::spmm) o.spmm_s = c.at("time_max_s").get<double>();
    o.epoch_s = j.at("summary").at("epoch_time_s").get<double>();
    o.sharing = sharing(j, file);
    read_ranks(j.at("per_rank"), file, o);
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
  std::vector<planning::CategoryFit> fits;
  const auto m = planning::calibrate(runs, planning::machine_profile(base), name,
                                     fmt::format("gcnlab plan --calibrate on {} runs (base profile {})", runs.size(), base),
                                     &fits);
  if (rank == 0) write_file_atomically(out, planning::profile_json(m) + "\n");
  std::string text = fmt::format("profile {} from {} runs -> {}\n  bandwidth intra {:.3g} B/s, inter {:.3g} B/s, {} ranks "
                                 "per node; Eq. 4.4 k_flops {:.4g}, k_fwd {:.4g}, k_bwd {:.4g}\n  {:<12} {:>12} {:>12} {:>12} {:>12}\n",
                                 name, runs.size(), out, m.intra_bandwidth, m.inter_bandwidth, m.gpus_per_node,
                                 m.k_flops, m.k_fwd, m.k_bwd, "kernel", "rate /s", "latency us", "ns/nonzero",
                                 "ns/row elem");
  for (int k = 0; k < kNumKernels; ++k)
    if (const planning::KernelRate& r = m.kernels[k]; r.priced())
      text += fmt::format("  {:<12} {:>12.4g} {:>12.3f} {:>12.3f} {:>12.3f}\n", to_string(static_cast<Kernel>(k)), r.rate,
                          r.latency_s * 1e6, r.nonzero_s * 1e9, r.row_element_s * 1e9);
  std::string per_byte;
  for (int c = 0; c < kNumCategories; ++c)
    if (const double s = m.intra_byte_s[static_cast<std::size_t>(c)]; s > 0)
      per_byte += fmt::format(" {} {:.3f}", to_string(static_cast<Category>(c)), s * 1e9);
  if (!per_byte.empty()) text += fmt::format("  ns per byte inside a node:{}\n", per_byte);
  text += fmt::format("  {:<13} {:>6} {:>13} {:>13} {:>15}\n", "category", "rows", "measured ms", "fitted ms",
                      "mean |err|");
  for (const auto& f : fits)
    text += fmt::format("  {:<13} {:>6} {:>13.3f} {:>13.3f} {:>14.1f}%\n", to_string(f.category), f.rows,
                        f.measured_s * 1e3, f.predicted_s * 1e3, f.mean_abs_error * 100);
  return text;
}

// --validate: the traced model for every run (from its own per-rank work and
// model bytes, what simulate would give), Plexus's for plexus-3d runs of GCN;
// the error per run, its median and worst, and per model and rank count
// whether the measured-fastest strategy and grid is in the model's top two.
std::string validate(const std::vector<Observation>& runs, const std::string& machine, const std::optional<std::string>& out,
                     int rank) {
  const auto m = planning::machine_profile(machine);
  std::vector<double> predicted, measured, errors, plexus_predicted, plexus_measured;
  nlohmann::json points = nlohmann::json::array();
  std::string text = fmt::format("{:<6} {:<10} {:<8} {:>5} {:>11} {:>11} {:>11} {:>7} {:>10} {:>10}  {}\n", "model",
                                 "algo", "grid", "share", "predicted", "measured", "error", "Plexus", "pred comm",
                                 "meas comm", "run");
  for (const auto& r : runs) {
    const auto t = planning::slowest_rank(r.ranks, m, r.sharing);
    const double err = (t.total_s() - r.epoch_s) / r.epoch_s;
    predicted.push_back(t.total_s()), measured.push_back(r.epoch_s), errors.push_back(std::abs(err));
    nlohmann::json point = {{"run", r.label},          {"model", r.problem.model}, {"algo", r.algo},
                            {"grid", r.run_grid},       {"sharing", r.sharing},    {"measured_s", r.epoch_s},
                            {"predicted_s", t.total_s()}, {"predicted_compute_s", t.compute_s},
                            {"predicted_comm_s", t.comm_s}, {"measured_comm_s", r.comm_s}, {"error", err}};
    std::string plexus_ms = "-";
    if (strategy_info(r.algo).caps.perf_model && planning::prices_convolutions(r.problem)) {
      const Prediction p = planning::predict(r.problem, r.grid, m);
      plexus_predicted.push_back(p.total_s()), plexus_measured.push_back(r.epoch_s);
      plexus_ms = fmt::format("{:.2f}", p.total_s() * 1e3);
      point["plexus"] = prediction_json(p);
    }
    text += fmt::format("{:<6} {:<10} {:<8} {:>5.1f} {:>8.2f} ms {:>8.2f} ms {:>+10.1f}% {:>7} {:>10.2f} {:>10.2f}  {}\n",
                        r.problem.model, r.algo, format_grid(r.run_grid), r.sharing, t.total_s() * 1e3, r.epoch_s * 1e3,
                        err * 100, plexus_ms, t.comm_s * 1e3, r.comm_s * 1e3, r.label);
    points.push_back(point);
  }
  std::vector<double> sorted = errors;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                          : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  const double rho = planning::spearman(predicted, measured);
  text += fmt::format("traced model, machine {}: median |error| {:.1f}%, worst {:.1f}%, Spearman {:.3f} over {} runs\n",
                      m.name, median * 100, sorted.back() * 100, rho, runs.size());
  nlohmann::json j = {{"schema", "gcnlab.plan-validation/2"}, {"machine", m.name},       {"points", points},
                      {"median_abs_error", median},         {"worst_abs_error", sorted.back()}, {"spearman", rho},
                      {"ranking", nlohmann::json::array()}};
  for (const auto& check : planning::ranking_checks(runs, predicted)) {
    text += fmt::format("ranking {} at {} ranks: measured fastest {} {} is plan's #{} of {} -> {}; plan's first "
                        "choice measured {:+.1f}%{}\n",
                        check.model, check.ranks, check.algo, format_grid(check.grid), check.predicted_place, check.runs,
                        check.predicted_place <= 2 ? "in the top two" : "NOT in the top two", check.regret * 100,
                        check.tied == 0 ? std::string()
                                        : fmt::format("; {} other{} within the repetitions' spread of it, the best "
                                                      "predicted plan's #{}",
                                                      check.tied, check.tied == 1 ? "" : "s", check.tied_place));
    j["ranking"].push_back({{"model", check.model}, {"ranks", check.ranks}, {"algo", check.algo}, {"grid", check.grid},
                            {"predicted_place", check.predicted_place}, {"runs", check.runs},
                            {"regret", check.regret}, {"tied", check.tied}, {"tied_place", check.tied_place}});
  }
  if (!plexus_predicted.empty()) {
    const double prho = planning::spearman(plexus_predicted, plexus_measured);
    text += fmt::format("Plexus's model (plexus-3d runs of GCN): Spearman {:.3f} over {} runs\n", prho,
                        plexus_predicted.size());
    j["plexus_spearman"] = prho;
  }
  if (out && rank == 0) write_file_atomically(*out, j.dump(1) + "\n");
  return text;
}

// --algo LIST|all: every grid of every strategy, from simulate's volumes.
std::string compare(const Dataset& data, const std::string& algo_list, const StrategyOptions& base,
                    const ModelConfig& model, int ranks, const planning::MachineProfile& m,
                    const std::optional<std::string>& out, int rank) {
  const std::vector<std::string> algos =
      algo_list == "all" ? strategies_with(&StrategyCaps::plan) : split_commas(algo_list);
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
  if (!refused.empty()) text += fmt::format("{} grid(s) refused by their strategy or the device memory (listed in the JSON)\n", refused.size());
  if (out && rank == 0) write_file_atomically(*out, j.dump(1) + "\n");
  return text;
}

}  // namespace

std::vector<int> auto_grid(const Dataset& data, const StrategyOptions& options, const ModelConfig& model, int ranks,
                           const std::string& machine) {
  const planning::Problem p = planning::problem_of(data.nodes(), data.nnz() + data.nodes(),
                                                  architecture(model, data.features, data.classes), model.learn_features);
  const auto m = planning::machine_profile(machine);
  if (!planning::prices_convolutions(p)) {  // the traced model over the strategy's grids
    const auto ranked = planning::compare_strategies(data, {options.algo}, options, model, ranks, m);
    GCNLAB_CHECK(!ranked.empty(), "--grid auto: no grid of {} ranks fits {} vertices", ranks, data.nodes());
    return ranked.front().grid;
  }
  const auto ranked = planning::rank_grids(p, ranks, m);
  GCNLAB_CHECK(!ranked.empty(), "--grid auto: no grid of {} ranks fits {} vertices", ranks, data.nodes());
  const Grid& g = ranked.front().grid;
  return {g[0], g[1], g[2]};
}

// plan --calibrate / --validate: a machine profile fitted to results files, or their predictions checked.
std::string calibration(Args& args, bool calibrate_wanted, const std::string& machine,
                        const std::optional<std::string>& out, int rank) {
  const std::string name = args.value_or("--name", "calibrated");
  const auto files = args.positional();
  args.finish();
  GCNLAB_CHECK(!files.empty(), "plan {} needs results files", calibrate_wanted ? "--calibrate" : "--validate");
  std::vector<Observation> runs;
  for (const auto& f : files) runs.push_back(observation(f));
  if (!calibrate_wanted) return validate(runs, machine, out, rank);
  GCNLAB_CHECK(out.has_value(), "plan --calibrate needs --out PROFILE.json");
  return calibrate(runs, machine, name, *out, rank);
}

// Plexus's model (Sec. 4) over plexus-3d's grids of `ranks`: the ranked table, and its JSON in --out.
std::string plexus_plan(const Dataset& data, const ModelConfig& model, int ranks, const planning::MachineProfile& m,
                        const std::optional<std::string>& out, int rank) {
  const planning::Problem p = planning::problem_of(data.nodes(), data.nnz() + data.nodes(),
                                                  architecture(model, data.features, data.classes), model.learn_features);
  const auto ranked = planning::rank_grids(p, ranks, m);
  GCNLAB_CHECK(!ranked.empty(), "no grid of {} ranks fits {} vertices", ranks, data.nodes());
  std::string text = fmt::format("plexus-3d plan: {} ({} nodes, {} nnz of Â), dims {}, {} ranks, machine {}\n"
                                 "{:>4} {:<10} {:>12} {:>10} {:>10} {:>9} {:>9} {:>9} {:>12}\n",
                                 data.name, p.n, p.nnz, fmt::join(p.dims, "-"), ranks, m.name, "rank", "grid",
                                 "epoch ms", "spmm ms", "comm ms", "x ms", "y ms", "z ms", "MiB/rank");
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
  if (out && rank == 0) write_file_atomically(*out, j.dump(1) + "\n");
  return text;
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
      text = calibration(args, calibrate_wanted, machine, out, world.rank());
      return;
    }

    const std::string spec = args.value_or("--dataset", "");
    GCNLAB_CHECK(!spec.empty(), "plan needs --dataset SPEC and --ranks G (or --calibrate / --validate)");
    const int ranks = static_cast<int>(args.integer("--ranks", 0, 1));
    GCNLAB_CHECK(ranks >= 1, "plan needs --ranks G");
    const auto algo_list = args.value("--algo");
    const ModelConfig model = read_model_config(args);
    // A model Plexus's model does not describe is priced by its traced epoch on plexus-3d's grids
    // (its layer kinds do not depend on the widths: any will do before the data is read).
    const bool traced =
        algo_list || !planning::prices_convolutions(planning::problem_of(1, 0, architecture(model, 1, 1), false));
    StrategyOptions base;
    if (traced) {
      GCNLAB_CHECK(world.size() == 1, "plan {} simulates its ranks as threads: run it without mpirun",
                   algo_list ? "--algo" : fmt::format("--model {}", model.name));
      GCNLAB_CHECK(ranks <= 4096, "plan simulates at most 4096 ranks (got {})", ranks);
      // without --algo: the strategy Plexus's model describes (the registry's perf_model)
      base = read_strategy_options(args, "plan", strategies_with(&StrategyCaps::perf_model).front());
      base.options.try_emplace("gemm-order", "direct");  // GEMM timing: the traced work does not depend on it
    }
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
    if (traced) {  // the grids of the strategy Plexus's model describes
      const std::string described = base.algo;
      text = fmt::format("Plexus's model (Sec. 4) prices GCN's graph convolutions only: --model {} is priced by its "
                         "traced epoch on {}'s grids\n",
                         model.name, described) +
             compare(data, described, base, model, ranks, m, out, world.rank());
      return;
    }
    text = plexus_plan(data, model, ranks, m, out, world.rank());
  });
  if (world.rank() == 0) fmt::print("{}", text);
  return 0;
}

}  // namespace gcnlab::cli

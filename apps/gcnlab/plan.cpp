// gcnlab plan: Plexus's performance model (planning/perf_model.hpp).
//
//   gcnlab plan --dataset SPEC --ranks G [--machine NAME|FILE] [--layers L] [--hidden H]
//               [--learn-features] [--out FILE.json]
//       every X x Y x Z factorisation of G ranked by predicted epoch time
//   gcnlab plan --calibrate RUN.json... --out PROFILE.json [--name NAME]
//       fits a machine profile to measured plexus-3d runs
//   gcnlab plan --validate RUN.json... [--machine NAME|FILE] [--out FILE.json]
//       predicted vs measured epoch time of runs, Spearman rank correlation (Plexus Fig. 5)

#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planning/perf_model.hpp"
#include "apps/gcnlab/commands.hpp"
#include "common/core/atomic_file.hpp"
#include "common/data/dataset.hpp"
#include "common/model/config.hpp"

namespace gcnlab::cli {

namespace {

using plexus::Grid;
using plexus::Observation;
using plexus::Prediction;

std::string grid_text(const Grid& g) { return fmt::format("{}x{}x{}", g[0], g[1], g[2]); }

// A plexus-3d results file as a calibration / validation point.
Observation observation(const std::string& file) {
  std::ifstream in(file);
  GCNLAB_CHECK(in.good(), "cannot open '{}'", file);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail("'{}' is not valid JSON ({})", file, e.what());
  }
  GCNLAB_CHECK(j.value("schema", "") == "gcnlab.run/1", "'{}' is not a gcnlab results file", file);
  GCNLAB_CHECK(j["config"]["algo"] == "plexus-3d", "'{}' is a {} run; the model describes plexus-3d", file,
               j["config"]["algo"].get<std::string>());
  Observation o;
  o.label = file;
  const auto& d = j["dataset"];
  o.problem.n = d["nodes"].get<std::int64_t>();
  o.problem.nnz = d["nnz"].get<std::int64_t>() + o.problem.n;  // Â = A + I
  o.problem.dims = j["config"]["model"]["dims"].get<std::vector<std::int64_t>>();
  o.problem.learn_features = j["config"]["model"].value("learn_features", false);
  const auto grid = j["config"]["grid"].get<std::vector<int>>();
  GCNLAB_CHECK(grid.size() == 3, "'{}': grid is not X x Y x Z", file);
  o.grid = {grid[0], grid[1], grid[2]};
  for (const auto& [name, c] : j["breakdown"].items()) {
    const auto cat = category_from_string(name);
    if (!cat) continue;
    if (*cat == Category::spmm) o.spmm_s = c["time_max_s"].get<double>();
    if (is_communication(*cat)) o.comm_s += c["time_max_s"].get<double>();
  }
  o.epoch_s = j["summary"]["epoch_time_s"].get<double>();
  return o;
}

void write_file(const std::string& path, const std::string& text) {
  write_file_atomically(path, text + "\n");
}

nlohmann::json prediction_json(const Prediction& p) {
  return {{"grid", p.grid},       {"predicted_s", p.total_s()}, {"spmm_s", p.spmm_s},
          {"comm_s", p.comm_s},   {"comm_axis_s", p.comm_axis_s}, {"wire_bytes", p.wire_bytes}};
}

}  // namespace

std::vector<int> auto_grid(const Dataset& data, const ModelConfig& model, int ranks, const std::string& machine) {
  plexus::Problem p{data.nodes(), data.nnz() + data.nodes(), model.dims(data.features, data.classes),
                    model.learn_features};
  const auto ranked = plexus::rank_grids(p, ranks, plexus::machine_profile(machine));
  GCNLAB_CHECK(!ranked.empty(), "--grid auto: no grid of {} ranks fits {} vertices", ranks, data.nodes());
  const Grid& g = ranked.front().grid;
  return {g[0], g[1], g[2]};
}

int plan(Args& args, Communicator& world) {
  std::string text;
  collectively(world, [&] {
    const auto calibrate = args.flag("--calibrate");
    const auto validate = args.flag("--validate");
    const std::string machine = args.value_or("--machine", "local");
    const auto out = args.value("--out");
    if (calibrate || validate) {
      GCNLAB_CHECK(!(calibrate && validate), "plan takes --calibrate or --validate, not both");
      const std::string name = args.value_or("--name", "calibrated");
      const auto files = args.positional();
      args.finish();
      GCNLAB_CHECK(!files.empty(), "plan {} needs plexus-3d results files", calibrate ? "--calibrate" : "--validate");
      std::vector<Observation> runs;
      for (const auto& f : files) runs.push_back(observation(f));
      if (calibrate) {
        GCNLAB_CHECK(out.has_value(), "plan --calibrate needs --out PROFILE.json");
        const auto m = plexus::calibrate(runs, name, fmt::format("gcnlab plan --calibrate on {} runs", runs.size()));
        if (world.rank() == 0) write_file(*out, plexus::profile_json(m));
        text = fmt::format("profile {} from {} runs: bandwidth {:.3g} B/s, k_flops {:.4g}, k_fwd {:.4g}, k_bwd {:.4g} -> {}\n",
                           name, runs.size(), m.intra_bandwidth, m.k_flops, m.k_fwd, m.k_bwd, *out);
        return;
      }
      const auto m = plexus::machine_profile(machine);
      std::vector<double> predicted, measured;
      nlohmann::json points = nlohmann::json::array();
      text = fmt::format("{:<10} {:>13} {:>12} {:>11} {:>11}  {}\n", "grid", "predicted ms", "measured ms",
                         "pred. comm", "meas. comm", "run");
      for (const auto& r : runs) {
        const Prediction p = plexus::predict(r.problem, r.grid, m);
        predicted.push_back(p.total_s());
        measured.push_back(r.epoch_s);
        text += fmt::format("{:<10} {:>13.3f} {:>12.3f} {:>11.3f} {:>11.3f}  {}\n", grid_text(r.grid), p.total_s() * 1e3,
                            r.epoch_s * 1e3, p.comm_s * 1e3, r.comm_s * 1e3, r.label);
        auto point = prediction_json(p);
        point["measured_s"] = r.epoch_s;
        point["measured_spmm_s"] = r.spmm_s;
        point["measured_comm_s"] = r.comm_s;
        point["run"] = r.label;
        points.push_back(point);
      }
      const double rho = plexus::spearman(predicted, measured);
      text += fmt::format("Spearman rank correlation (predicted vs measured epoch time): {:.3f} over {} runs, machine {}\n",
                          rho, runs.size(), m.name);
      if (out && world.rank() == 0)
        write_file(*out, nlohmann::json{{"schema", "gcnlab.plan-validation/1"},
                                        {"machine", m.name},
                                        {"spearman", rho},
                                        {"points", points}}
                             .dump(1));
      return;
    }

    const std::string spec = args.value_or("--dataset", "");
    GCNLAB_CHECK(!spec.empty(), "plan needs --dataset SPEC and --ranks G (or --calibrate / --validate)");
    const int ranks = static_cast<int>(args.integer("--ranks", 0, 1));
    GCNLAB_CHECK(ranks >= 1, "plan needs --ranks G");
    ModelConfig model;
    model.layers = static_cast<int>(args.integer("--layers", 3, 1));
    model.hidden = args.integer("--hidden", 128, 1);
    model.learn_features = args.flag("--learn-features");
    args.finish();
    const auto m = plexus::machine_profile(machine);
    const Dataset data = load_dataset(spec);
    const plexus::Problem p{data.nodes(), data.nnz() + data.nodes(), model.dims(data.features, data.classes),
                            model.learn_features};
    const auto ranked = plexus::rank_grids(p, ranks, m);
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
    if (out && world.rank() == 0) write_file(*out, j.dump(1));
  });
  if (world.rank() == 0) fmt::print("{}", text);
  return 0;
}

}  // namespace gcnlab::cli

#include "common/results/results.hpp"

#include <unistd.h>

#include <fstream>
#include <thread>

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "common/comm/ledger.hpp"
#include "common/core/json.hpp"
#include "common/results/history.hpp"
#include "gcnlab_config.hpp"

namespace gcnlab {

nlohmann::json this_machine() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string cpu;
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; cpu.empty() && std::getline(info, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) cpu = line.substr(line.find(':') + 2);
  return {{"host", host}, {"cpu", cpu}, {"cores", std::thread::hardware_concurrency()}};
}

RunInfo describe_dataset(RunInfo info, const Dataset& d) {
  info.dataset_spec = d.spec;
  info.dataset_name = d.name;
  info.nodes = d.nodes();
  info.nnz = d.nnz();
  info.features = d.features;
  info.classes = d.classes;
  info.n_train = d.count(ew::kTrain);
  info.n_val = d.count(ew::kVal);
  info.n_test = d.count(ew::kTest);
  info.directed = d.directed;
  return info;
}

namespace {

struct Across {
  double max = 0, mean = 0, total = 0;
};

template <class F>
Across across(const RunResult& r, F value) {
  Across a;
  for (const auto& rr : r.ranks) {
    const double v = value(rr);
    a.max = std::max(a.max, v);
    a.total += v;
  }
  a.mean = r.ranks.empty() ? 0 : a.total / static_cast<double>(r.ranks.size());
  return a;
}

using nlohmann::json;

// The run's configuration (schema "config").
json config_json(const RunInfo& info, const RunResult& r) {
  json c = {{"algo", info.algo},
            {"grid", info.grid},
            {"ranks", info.ranks},
            {"threads", info.threads},
            {"backend", info.backend},
            {"seed", info.model.seed},
            {"epochs", info.train.epochs},
            {"model",
             {{"variant", info.model.name},
              {"layers", info.model.layers},
              {"dims", r.dims},
              {"optimizer", info.model.optimizer},
              {"lr", info.model.lr},
              {"weight_decay", info.model.weight_decay},
              {"weight_decay_layers", info.model.weight_decay_first_only ? "first" : "all"},
              {"dropout", info.model.dropout},
              {"learn_features", info.model.learn_features}}},
            {"partitioner", info.partitioner},
            {"partition", info.partition_quality},
            {"agg_blocks", 1},  // these four: the values of strategies that do not declare them
            {"overlap", json()},
            {"dw_reduce", json()},
            {"softmax", json()},
            {"order", info.order},
            {"comm_precision", info.comm_precision},
            {"activations", info.activations},
            {"minibatch", info.train.batch_size > 0
                              ? json{{"batch_size", info.train.batch_size},
                                     {"steps_per_epoch", r.steps_per_epoch},
                                     {"eval_every", info.train.eval_every},
                                     {"prefetch", info.train.prefetch},
                                     {"dp_groups", info.dp_groups}}
                              : json()},
            {"target_acc", info.train.target_acc > 0 ? json(info.train.target_acc) : json()},
            {"checkpoint", info.checkpoint},
            {"resumed_from", info.resumed_from},
            {"describe", info.describe}};
  for (const auto& [key, value] : info.strategy_options.items()) c[key] = value;
  c["permutation"] = info.permutation;  // the strategy's resolved one (an option's "" is its default)
  if (info.model.gin_eps != 0 || info.model.train_eps)  // absent: the default
    c["model"]["gin_eps"] = info.model.gin_eps, c["model"]["train_eps"] = info.model.train_eps;
  if (info.model.heads != 8 || info.model.attention_dropout != 0)  // absent: the defaults
    c["model"]["heads"] = info.model.heads, c["model"]["attention_dropout"] = info.model.attention_dropout;
  if (!info.model.concat || info.model.output_heads != 1)  // absent: the defaults
    c["model"]["concat"] = info.model.concat, c["model"]["output_heads"] = info.model.output_heads;
  return c;
}

json epochs_json(const RunResult& r) {
  json epochs = json::array();
  for (const auto& e : r.epochs) epochs.push_back(epoch_json(e));
  return epochs;
}

// Per category: time (max, mean over ranks), bytes and calls per epoch.
json breakdown_json(const RunResult& r) {
  json breakdown = json::object();
  for (int c = 0; c < kNumCategories; ++c) {
    auto pick = [c](auto field) { return [c, field](const RankReport& rr) { return field(rr.per_epoch[c]); }; };
    const Across time = across(r, pick([](const Tally& t) { return t.time_s; }));
    const Across wire = across(r, pick([](const Tally& t) { return t.wire_bytes; }));
    const Across payload = across(r, pick([](const Tally& t) { return t.payload_bytes; }));
    const Across calls = across(r, pick([](const Tally& t) { return static_cast<double>(t.calls); }));
    const Across hidden = across(r, pick([](const Tally& t) { return t.hidden_s; }));
    const Across padding = across(r, pick([](const Tally& t) { return t.padding_bytes; }));
    breakdown[std::string(to_string(static_cast<Category>(c)))] = {
        {"time_max_s", time.max},           {"time_mean_s", time.mean},       {"wire_bytes_max", wire.max},
        {"wire_bytes_total", wire.total},   {"payload_bytes_max", payload.max}, {"calls", calls.max},
        {"hidden_time_max_s", hidden.max},  {"hidden_time_mean_s", hidden.mean},
        {"padding_bytes_max", padding.max}};
  }
  return breakdown;
}

json per_rank_json(const RunResult& r) {
  json ranks = json::array();
  for (const auto& rr : r.ranks) {
    json time = json::object(), hidden = json::object(), wire = json::object(), model = json::object(),
         setup_wire = json::object(), link_intra = json::object(), link_inter = json::object();
    for (int c = 0; c < kNumCategories; ++c) {
      const std::string name(to_string(static_cast<Category>(c)));
      time[name] = rr.per_epoch[c].time_s;
      if (is_communication(static_cast<Category>(c))) {
        hidden[name] = rr.per_epoch[c].hidden_s;
        wire[name] = rr.per_epoch[c].wire_bytes;
        model[name] = rr.model[c];
        setup_wire[name] = rr.setup[c].wire_bytes;
        link_intra[name] = rr.model_link.intra[static_cast<std::size_t>(c)];
        link_inter[name] = rr.model_link.inter_weighted[static_cast<std::size_t>(c)];
      }
    }
    ranks.push_back({{"rank", rr.rank},
                     {"coords", rr.coords},
                     {"nnz_local", rr.nnz_local},
                     {"edges_local", rr.edges_local},
                     {"peak_bytes", rr.peak_bytes},
                     {"host_peak_bytes", rr.host_peak_bytes},
                     {"memory_need", {{"graph", rr.memory.graph},
                                      {"buffers", rr.memory.buffers},
                                      {"activations", rr.memory.activations},
                                      {"weights", rr.memory.weights},
                                      {"total", rr.memory.total()}}},
                     {"time_s", time},
                     {"hidden_time_s", hidden},
                     {"wire_bytes", wire},
                     {"model_wire_bytes", model},
                     {"model_link_bytes",
                      {{"intra", rr.model_link.intra_total()},
                       {"inter_weighted", rr.model_link.inter_weighted_total()},
                       {"intra_by_category", link_intra},
                       {"inter_weighted_by_category", link_inter}}},
                     {"setup_wire_bytes", setup_wire},
                     {"work", work_json(rr.work)}});
  }
  return ranks;
}

// "load_balance" and "memory" into j.
void balance_and_memory_json(const RunResult& r, json& j) {
  const Across nnz = across(r, [](const RankReport& rr) { return static_cast<double>(rr.nnz_local); });
  j["load_balance"] = {{"nnz_max", nnz.max}, {"nnz_mean", nnz.mean},
                       {"nnz_max_over_mean", nnz.mean > 0 ? nnz.max / nnz.mean : 0.0}};
  const Across peak = across(r, [](const RankReport& rr) { return rr.peak_bytes; });
  const Across host = across(r, [](const RankReport& rr) { return rr.host_peak_bytes; });
  const Across need = across(r, [](const RankReport& rr) { return rr.memory.total(); });
  const Across staging = across(r, [](const RankReport& rr) { return rr.staging_host_bytes; });
  const Across ratio = across(r, [](const RankReport& rr) {
    return rr.memory.total() > 0 ? rr.peak_bytes / rr.memory.total() : 0.0;
  });
  j["memory"] = {{"peak_bytes_max", peak.max},
                 {"peak_bytes_mean", peak.mean},
                 {"host_peak_bytes_max", host.max},
                 {"host_peak_bytes_mean", host.mean},
                 {"analytic_bytes_max", need.max},
                 {"analytic_bytes_mean", need.mean},
                 {"peak_over_analytic_max", ratio.max},
                 {"staging_host_bytes_max", staging.max}};
}

}  // namespace

json work_json(const CategoryWork& work) {
  json out = json::object();
  for (int c = 0; c < kNumCategories; ++c)
    for (int k = 0; k < kNumKernels; ++k)
      if (const Work& w = work[c][k]; w.calls > 0)
        out[std::string(to_string(static_cast<Category>(c)))][std::string(to_string(static_cast<Kernel>(k)))] = {
            {"amount", w.amount},       {"calls", w.calls}, {"nonzeros", w.nonzeros},
            {"row_elements", w.row_elements}, {"bytes", w.bytes}};
  return out;
}

// The first epoch is excluded from the mean epoch time when there are several (warm-up).
// An epoch slower than kSlowEpoch x the median of the timed epochs is a burst
// from outside the process (a shared machine's neighbours, a cloud VM's steal):
// listed in slow_epochs and left out of epoch_time_s, which a half-minute burst
// would otherwise double.
json summary_json(const RunResult& r) {
  // The times of this segment (the breakdown's): its first epoch warms up when it ran several.
  const std::size_t first = r.segment_start + (r.epochs.size() - r.segment_start > 1 ? 1 : 0);
  std::vector<double> timed;
  for (std::size_t e = first; e < r.epochs.size(); ++e) timed.push_back(r.epochs[e].time_s);
  std::vector<double> sorted = timed;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t m = sorted.size();
  const double median = m == 0 ? 0.0 : m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
  double epoch_time = 0;
  int kept = 0;
  json slow = json::array();
  for (std::size_t i = 0; i < timed.size(); ++i) {
    if (timed[i] > kSlowEpoch * median) {
      slow.push_back(r.epochs[first + i].epoch);
      continue;
    }
    epoch_time += timed[i], ++kept;
  }
  int best = 0;
  for (std::size_t e = 0; e < r.epochs.size(); ++e)
    if (r.epochs[e].val_acc > r.epochs[best].val_acc) best = static_cast<int>(e);
  return {{"epoch_time_s", kept ? epoch_time / kept : 0.0},
          {"epoch_time_median_s", median},
          {"slow_epochs", slow},
          {"setup_time_s", r.setup_time_s},
          {"final_loss", r.epochs.back().loss},
          {"test_acc", r.epochs.back().test_acc},
          {"best_val_acc", r.epochs[best].val_acc},
          {"test_acc_at_best_val", r.epochs[best].test_acc},
          {"target", r.target ? json{{"epochs", r.target->epochs},
                                     {"train_seconds", r.target->train_seconds},
                                     {"val_acc", r.target->val_acc}}
                              : json()}};
}


nlohmann::json results_json(const RunInfo& info, const RunResult& r) {
  json j;
  j["schema"] = "gcnlab.run/1";
  j["gcnlab_version"] = GCNLAB_VERSION;
  j["git_sha"] = GCNLAB_GIT_SHA;
  j["machine"] = this_machine();
  if (!info.provenance.is_null()) j["provenance"] = info.provenance;
  j["config"] = config_json(info, r);
  j["dataset"] = {{"spec", info.dataset_spec}, {"name", info.dataset_name}, {"nodes", info.nodes},
                  {"nnz", info.nnz},           {"features", info.features}, {"classes", info.classes},
                  {"train", info.n_train},     {"val", info.n_val},         {"test", info.n_test},
                  {"directed", info.directed}};
  j["status"] = info.stopped.is_null() ? "complete" : "stopped";
  j["stopped"] = info.stopped;
  j["segments"] = info.segments;
  j["epochs"] = epochs_json(r);
  j["breakdown"] = breakdown_json(r);
  j["per_rank"] = per_rank_json(r);
  balance_and_memory_json(r, j);
  j["summary"] = summary_json(r);
  return j;
}

namespace {

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} {}", b, units[u]) : fmt::format("{:.2f} {}", b, units[u]);
}

}  // namespace

std::string breakdown_table(const RunResult& r) {
  std::string out = fmt::format("{:<15} {:>12} {:>12} {:>14} {:>14} {:>8} {:>14}\n", "category", "time max ms",
                                "time mean ms", "wire max", "wire total", "calls", "hidden max ms");
  for (int c = 0; c < kNumCategories; ++c) {
    const Across time = across(r, [c](const RankReport& rr) { return rr.per_epoch[c].time_s; });
    const Across wire = across(r, [c](const RankReport& rr) { return rr.per_epoch[c].wire_bytes; });
    const Across calls = across(r, [c](const RankReport& rr) { return static_cast<double>(rr.per_epoch[c].calls); });
    const Across hidden = across(r, [c](const RankReport& rr) { return rr.per_epoch[c].hidden_s; });
    const bool comm = is_communication(static_cast<Category>(c));
    if (time.max == 0 && calls.max == 0 && static_cast<Category>(c) != Category::other) continue;
    out += fmt::format("{:<15} {:>12.3f} {:>12.3f} {:>14} {:>14} {:>8.0f} {:>14}\n", to_string(static_cast<Category>(c)),
                       time.max * 1e3, time.mean * 1e3, comm ? human_bytes(wire.max) : "",
                       comm ? human_bytes(wire.total) : "", calls.max,
                       hidden.max > 0 ? fmt::format("{:.3f}", hidden.max * 1e3) : "");
  }
  return out;
}

std::string comparison_table(const std::vector<nlohmann::json>& runs) {
  // A category a run did not record (an older gcnlab, a strategy without it) reads 0.
  auto category = [](const nlohmann::json& j, const std::string& name, const char* field) {
    return j.at("breakdown").value(name, nlohmann::json::object()).value(field, 0.0);
  };
  auto label = [](const nlohmann::json& j) {
    const auto& config = j.at("config");
    return fmt::format("{} P={}", config.at("algo").get<std::string>(), json_get<int>(config.at("ranks")));
  };
  std::string out = fmt::format("{:<26}", "");
  for (const auto& j : runs) out += fmt::format(" {:>14}", label(j));
  out += "\n";
  auto row = [&](const std::string& name, auto value) {
    out += fmt::format("{:<26}", name);
    for (const auto& j : runs) out += fmt::format(" {:>14}", value(j));
    out += "\n";
  };
  row("epoch time ms", [](const nlohmann::json& j) {
    return fmt::format("{:.2f}", j.at("summary").at("epoch_time_s").get<double>() * 1e3);
  });
  row("final loss", [](const nlohmann::json& j) {
    return fmt::format("{:.5f}", j.at("summary").at("final_loss").get<double>());
  });
  row("test acc %", [](const nlohmann::json& j) {
    return fmt::format("{:.2f}", 100 * j.at("summary").at("test_acc").get<double>());
  });
  row("peak MiB / rank (max)", [](const nlohmann::json& j) {
    return fmt::format("{:.1f}", j.at("memory").at("peak_bytes_max").get<double>() / (1 << 20));
  });
  row("host peak MiB / rank", [](const nlohmann::json& j) {
    return fmt::format("{:.1f}", j.at("memory").value("host_peak_bytes_max", 0.0) / (1 << 20));
  });
  for (int c = 0; c < kNumCategories; ++c) {
    const std::string name(to_string(static_cast<Category>(c)));
    bool any = false;
    for (const auto& j : runs) any |= category(j, name, "time_max_s") > 0;
    if (!any) continue;
    row(name + " ms (max)", [&](const nlohmann::json& j) {
      return fmt::format("{:.2f}", category(j, name, "time_max_s") * 1e3);
    });
    if (is_communication(static_cast<Category>(c)))
      row(name + " KiB (max)", [&](const nlohmann::json& j) {
        return fmt::format("{:.1f}", category(j, name, "wire_bytes_max") / 1024);
      });
  }
  return out;
}

namespace {

// (column, JSON pointer) of the per-run columns; plots/common.py RUN_COLUMNS is the same list.
const std::vector<std::pair<std::string, std::string>> kRunColumns = {
    {"dataset", "/dataset/name"},          {"spec", "/dataset/spec"},
    {"nodes", "/dataset/nodes"},           {"nnz", "/dataset/nnz"},
    {"algo", "/config/algo"},              {"grid", "/config/grid"},
    {"ranks", "/config/ranks"},            {"threads", "/config/threads"},
    {"backend", "/config/backend"},        {"seed", "/config/seed"},
    {"epochs", "/config/epochs"},          {"dims", "/config/model/dims"},
    {"dropout", "/config/model/dropout"},  {"model", "/config/model/variant"},
    {"partitioner", "/config/partitioner"},
    {"permutation", "/config/permutation"}, {"comm_precision", "/config/comm_precision"},
    {"batch_size", "/config/minibatch/batch_size"}, {"dp_groups", "/config/minibatch/dp_groups"},
    {"epoch_time_s", "/summary/epoch_time_s"}, {"setup_time_s", "/summary/setup_time_s"},
    {"final_loss", "/summary/final_loss"}, {"test_acc", "/summary/test_acc"},
    {"best_val_acc", "/summary/best_val_acc"}, {"peak_bytes_max", "/memory/peak_bytes_max"},
    {"host_peak_bytes_max", "/memory/host_peak_bytes_max"},
    {"nnz_max_over_mean", "/load_balance/nnz_max_over_mean"},
    {"oversubscribed", "/provenance/oversubscribed"}, {"timestamp_utc", "/provenance/timestamp_utc"},
    {"git_sha", "/git_sha"}};
const std::vector<std::string> kCategoryFields = {"time_max_s", "time_mean_s", "hidden_time_max_s", "wire_bytes_max",
                                                  "wire_bytes_total"};

// A JSON value as one CSV field: numbers exactly, arrays as "a x b x c" ("x"
// joined), strings quoted when needed, absent values empty.
std::string csv_field(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) return fmt::format("{}", v.get<double>());  // shortest round-trip
  if (v.is_array()) {
    std::string s;
    for (const auto& x : v) {
      if (!s.empty()) s += 'x';
      s += csv_field(x);
    }
    return s;
  }
  std::string s = v.get<std::string>();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';  // doubled inside a quoted field
    q += c;
  }
  return q + "\"";
}

}  // namespace

std::string runs_csv(const std::vector<nlohmann::json>& runs, const std::vector<std::string>& files) {
  GCNLAB_ASSERT(runs.size() == files.size());
  std::string out = "file";
  for (const auto& [name, pointer] : kRunColumns) out += fmt::format(",{}", name);
  for (int c = 0; c < kNumCategories; ++c)
    for (const std::string& f : kCategoryFields) out += fmt::format(",{}.{}", to_string(static_cast<Category>(c)), f);
  out += "\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const nlohmann::json& j = runs[i];
    auto put = [&](const std::string& pointer) {  // absent (older files, other strategies): empty
      const nlohmann::json::json_pointer p(pointer);
      out += ',';
      if (j.contains(p)) out += csv_field(j.at(p));
    };
    out += csv_field(files[i]);
    for (const auto& [name, pointer] : kRunColumns) put(pointer);
    for (int c = 0; c < kNumCategories; ++c)
      for (const std::string& f : kCategoryFields) put(fmt::format("/breakdown/{}/{}", to_string(static_cast<Category>(c)), f));
    out += "\n";
  }
  return out;
}

}  // namespace gcnlab

#include "common/results/checkpoint.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "common/core/atomic_file.hpp"
#include "common/core/error.hpp"
#include "common/core/fingerprint.hpp"
#include "common/core/json.hpp"
#include "common/results/npy.hpp"
#include "gcnlab_config.hpp"

namespace gcnlab {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSchema = "gcnlab.checkpoint/1";
constexpr const char* kIndex = "checkpoint.json";
constexpr const char* kPrefix = "epoch-";

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  GCNLAB_CHECK(in.good(), "cannot open '{}'", path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A file's fingerprint as its manifest entry records it: {"fingerprint": xxh3},
// or, in checkpoints written before xxHash, {"fnv1a64": FNV-1a}.
bool matches_record(const std::string& bytes, const json& entry) {
  const std::string recorded = entry.contains("fingerprint") ? entry.at("fingerprint").get<std::string>()
                                                             : entry.at("fnv1a64").get<std::string>();
  return Fingerprint(Fingerprint::kind_of(recorded)).add(bytes).hex() == recorded;
}

// The fingerprint of a file of any size, read in pieces (the learned features' n x f files).
std::string file_fingerprint(const std::string& path, Fingerprint::Kind kind = Fingerprint::Kind::xxh3) {
  std::ifstream in(path, std::ios::binary);
  GCNLAB_CHECK(in.good(), "cannot open '{}'", path);
  Fingerprint f(kind);
  std::vector<char> piece(1 << 20);
  while (in) {
    in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    f.add(std::string_view(piece.data(), static_cast<std::size_t>(in.gcount())));
  }
  return f.hex();
}

// The learned features' files (--learn-features): X, and Adam's moments of it.
constexpr std::array<const char*, 3> kFeatureFiles = {"X.npy", "XM.npy", "XV.npy"};
std::size_t feature_files(bool adam) { return adam ? 3 : 1; }

// The epoch of "epoch-NNNNNN", or -1 for any other name.
int epoch_of(const std::string& name) {
  if (name.rfind(kPrefix, 0) != 0 || name.size() == std::char_traits<char>::length(kPrefix)) return -1;
  int e = 0;
  for (char c : name.substr(std::char_traits<char>::length(kPrefix))) {
    if (c < '0' || c > '9' || e > 100'000'000) return -1;
    e = 10 * e + (c - '0');
  }
  return e;
}

// Complete checkpoints of `dir`, oldest first.
std::vector<std::pair<int, std::string>> checkpoints_in(const std::string& dir) {
  std::vector<std::pair<int, std::string>> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const int e = epoch_of(entry.path().filename().string());
    if (e >= 0 && fs::exists(entry.path() / kIndex)) out.emplace_back(e, entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A parameter's files: its value W<stem>.npy and Adam's moments M<stem>.npy
// and V<stem>.npy, the stem being its name without a leading W (W1: W1.npy,
// M1.npy, V1.npy; S0: WS0.npy, MS0.npy, VS0.npy).
std::string matrix_name(char kind, const std::string& name) {
  return fmt::format("{}{}.npy", kind, !name.empty() && name[0] == 'W' ? name.substr(1) : name);
}

json parameters_json(const std::vector<ParameterShape>& params) {
  json out = json::array();
  for (const ParameterShape& p : params) out.push_back({{"name", p.name}, {"rows", p.rows}, {"cols", p.cols}});
  return out;
}

// The parameters of a checkpoint: its index's list, or, in one written before
// the index recorded them, what the models then had: W<l> for every weight
// layer of the identity's dims and, for ScaleGNN's model (the only one with
// more), the RMSNorm scale S<k> of each GNN layer (1 x dims[1]).
std::vector<ParameterShape> recorded_parameters(const json& index_or_null, const json& model) {
  std::vector<ParameterShape> out;
  if (index_or_null.is_object() && index_or_null.contains("parameters")) {
    for (const json& p : index_or_null.at("parameters")) {
      out.push_back({json_get<std::string>(p.at("name")), json_get<std::int64_t>(p.at("rows")),
                     json_get<std::int64_t>(p.at("cols"))});
      const ParameterShape& q = out.back();
      const bool plain = !q.name.empty() && std::all_of(q.name.begin(), q.name.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
      });
      GCNLAB_CHECK(plain && q.rows >= 1 && q.cols >= 1, "malformed parameter '{}' ({} x {}) in the checkpoint index",
                   q.name, q.rows, q.cols);
    }
    return out;
  }
  const auto dims = json_get<std::vector<std::int64_t>>(model.at("dims"));
  for (std::size_t l = 0; l + 1 < dims.size(); ++l) out.push_back({fmt::format("W{}", l), dims[l], dims[l + 1]});
  if (model.value("variant", "gcn") == "scalegnn" && dims.size() >= 3)
    for (std::size_t k = 0; k + 3 < dims.size(); ++k) out.push_back({fmt::format("S{}", k), 1, dims[1]});
  return out;
}

}  // namespace

json checkpoint_identity(const RunInfo& info, const std::vector<std::int64_t>& dims) {
  const ModelConfig& m = info.model;
  auto exact = [](float x) { return fmt::format("{}", x); };  // shortest text that reads back as x: "0.01
  json j = {{"dataset",
           {{"name", info.dataset_name},
            {"nodes", info.nodes},
            {"nnz", info.nnz},
            {"features", info.features},
            {"classes", info.classes},
            {"fingerprint", info.dataset_fingerprint}}},
          {"model",
           {{"dims", dims},
            {"optimizer", m.optimizer},
            {"lr", exact(m.lr)},
            {"beta1", exact(m.beta1)},
            {"beta2", exact(m.beta2)},
            {"eps", exact(m.eps)},
            {"weight_decay", exact(m.weight_decay)},
            {"weight_decay_layers", m.weight_decay_first_only ? "first" : "all"},
            {"dropout", exact(m.dropout)},
            {"seed", m.seed},
            {"learn_features", m.learn_features}}}};
  if (m.name != "gcn") {  // absent: gcn (checkpoints written before --model)
    j["model"]["variant"] = m.name;
    j["model"]["norm_eps"] = exact(m.norm_eps);
  }
  if (m.gin_eps != 0 || m.train_eps)  // absent: the defaults (checkpoints written before --model gin)
    j["model"]["gin_eps"] = exact(m.gin_eps), j["model"]["train_eps"] = m.train_eps;
  if (m.heads != 8 || m.attention_dropout != 0)  // absent: the defaults (checkpoints written before --model gat)
    j["model"]["heads"] = m.heads, j["model"]["attention_dropout"] = exact(m.attention_dropout);
  if (!m.concat || m.output_heads != 1)  // absent: the defaults (checkpoints written before --concat)
    j["model"]["concat"] = m.concat, j["model"]["output_heads"] = m.output_heads;
  return j;
}

json checkpoint_run(const RunInfo& info) {
  return {{"algo", info.algo},       {"grid", info.grid},         {"ranks", info.ranks},
          {"backend", info.backend}, {"epochs", info.train.epochs}, {"dataset_spec", info.dataset_spec},
          {"gcnlab_version", GCNLAB_VERSION}, {"git_sha", GCNLAB_GIT_SHA}};
}

std::string checkpoint_path(const std::string& dir, int epoch) {
  return (fs::path(dir) / fmt::format("{}{:06d}", kPrefix, epoch)).string();
}

std::string checkpoint_staging(const std::string& dir, int epoch, std::int64_t token) {
  return (fs::path(dir) / fmt::format(".{}{:06d}.tmp-{}", kPrefix, epoch, token)).string();
}

void create_feature_files(const std::string& staging, std::int64_t n, std::int64_t f, bool adam) {
  std::error_code ec;
  fs::remove_all(staging, ec);
  fs::create_directories(staging, ec);
  GCNLAB_CHECK(!ec, "cannot create '{}' ({})", staging, ec.message());
  for (std::size_t k = 0; k < feature_files(adam); ++k) create_npy((fs::path(staging) / kFeatureFiles[k]).string(), n, f);
}

void write_feature_rows(const std::string& staging, const FeatureBlock& b) {
  const std::vector<float>* parts[] = {&b.x, &b.m, &b.v};
  for (std::size_t k = 0; k < feature_files(!b.m.empty()); ++k)
    write_npy_rows((fs::path(staging) / kFeatureFiles[k]).string(), b.vertices, b.col0, b.cols, *parts[k]);
}

FeatureBlock read_feature_rows(const Checkpoint& c, FeatureBlock layout) {
  GCNLAB_CHECK(c.learned_features, "checkpoint '{}' holds no learned features (written without --learn-features)",
               c.path);
  std::vector<float>* parts[] = {&layout.x, &layout.m, &layout.v};
  for (std::size_t k = 0; k < feature_files(!c.state.m.empty()); ++k)
    *parts[k] = read_npy_rows((fs::path(c.path) / kFeatureFiles[k]).string(), layout.vertices, layout.col0, layout.cols);
  return layout;
}

namespace {

// The training progress of a state (checkpoint.json "progress").
json progress_json(const TrainingState& s) {
  json target;
  if (s.target)
    target = {{"epochs", s.target->epochs}, {"train_seconds", s.target->train_seconds}, {"val_acc", s.target->val_acc}};
  return {{"train_seconds", s.train_seconds}, {"target", target}};
}

void read_progress(const json& p, TrainingState& s) {
  s.train_seconds = json_get<double>(p.at("train_seconds"));
  if (const json& t = p.at("target"); !t.is_null())
    s.target = TargetReached{json_get<double>(t.at("epochs")), json_get<double>(t.at("train_seconds")),
                             json_get<double>(t.at("val_acc"))};
}

// A JSON record of the checkpoint, written into `tmp` and listed in `files`.
void put_record(const std::string& tmp, const char* file, const json& doc, json& files) {
  const std::string text = doc.dump(1) + "\n";
  write_file_atomically((fs::path(tmp) / file).string(), text);
  files[file] = {{"bytes", text.size()}, {"fingerprint", Fingerprint().add(text).hex()}};
}

// A listed JSON record, checked against its size and hash; null when not listed.
json take_record(const std::string& dir, const char* file, const json& files) {
  if (!files.contains(file)) return nullptr;
  const std::string p = (fs::path(dir) / file).string();
  GCNLAB_CHECK(fs::exists(p), "checkpoint file '{}' is missing", p);
  const std::string bytes = file_bytes(p);
  GCNLAB_CHECK(bytes.size() == json_get<std::size_t>(files.at(file).at("bytes")) && matches_record(bytes, files.at(file)),
               "checkpoint file '{}' does not match its recorded size and hash (damaged)", p);
  return json::parse(bytes);
}

constexpr const char* kHistory = "history.json";
constexpr const char* kResults = "results.json";

std::string write_checkpoint_files(const std::string& dir, const TrainingState& state, const json& identity,
                                   const json& run, int keep, const std::string& tmp, bool fresh,
                                   const CheckpointRecords& records) {
  const std::vector<ParameterShape> params =
      state.params.empty() ? recorded_parameters(nullptr, identity.at("model")) : state.params;
  GCNLAB_ASSERT(state.w.size() == params.size());
  std::error_code ec;
  const std::string final_path = checkpoint_path(dir, state.epoch);
  if (fresh) {
    fs::remove_all(tmp);
    fs::create_directory(tmp, ec);
    GCNLAB_CHECK(!ec, "cannot create '{}' ({})", tmp, ec.message());
  }

  json files = json::object();
  auto put = [&](char kind, const Weights& ws) {
    for (std::size_t k = 0; k < ws.size(); ++k) {
      const std::string file = matrix_name(kind, params[k].name), path = (fs::path(tmp) / file).string();
      write_npy(path, params[k].rows, params[k].cols, ws[k]);
      const std::string bytes = file_bytes(path);
      files[file] = {{"bytes", bytes.size()}, {"fingerprint", Fingerprint().add(bytes).hex()}};
    }
  };
  put('W', state.w);
  put('M', state.m);
  put('V', state.v);
  if (identity.at("model").value("learn_features", false))  // written in place by every rank
    for (std::size_t k = 0; k < feature_files(!state.m.empty()); ++k) {
      const std::string path = (fs::path(tmp) / kFeatureFiles[k]).string();
      GCNLAB_CHECK(fs::exists(path), "'{}' is missing: learned features are staged by create_feature_files", path);
      files[kFeatureFiles[k]] = {{"bytes", fs::file_size(path)}, {"fingerprint", file_fingerprint(path)}};
    }
  if (!records.history.is_null()) put_record(tmp, kHistory, records.history, files);
  if (!records.results.is_null()) put_record(tmp, kResults, records.results, files);
  const json index = {{"schema", kSchema},      {"epoch", state.epoch},
                      {"identity", identity},   {"run", run},
                      {"parameters", parameters_json(params)}, {"progress", progress_json(state)},
                      {"files", files}};
  write_file_atomically((fs::path(tmp) / kIndex).string(), index.dump(1) + "\n");
  commit_directory(tmp, final_path);

  // Keep the newest `keep`; remove what killed runs left behind.
  auto all = checkpoints_in(dir);
  for (std::size_t k = 0; k + keep < all.size(); ++k) fs::remove_all(all[k].second, ec);
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string f = entry.path().filename().string();
    if (f.rfind(std::string(".") + kPrefix, 0) == 0 && f.find(".tmp-") != std::string::npos)
      fs::remove_all(entry.path(), ec);
  }
  return final_path;
}

}  // namespace

std::string write_checkpoint(const std::string& dir, const TrainingState& state, const json& identity,
                             const json& run, int keep, const std::string& staging, const CheckpointRecords& records) {
  GCNLAB_ASSERT(keep >= 1);
  std::error_code ec;
  fs::create_directories(dir, ec);
  GCNLAB_CHECK(!ec, "cannot create checkpoint directory '{}' ({})", dir, ec.message());
  const std::string tmp = staging.empty() ? checkpoint_staging(dir, state.epoch, ::getpid()) : staging;
  try {
    return write_checkpoint_files(dir, state, identity, run, keep, tmp, staging.empty(), records);
  } catch (...) {  // a full disk, a quota: no debris beside the checkpoints that stay whole
    fs::remove_all(tmp, ec);
    throw;
  }
}

std::optional<std::string> latest_checkpoint(const std::string& dir) {
  const auto all = checkpoints_in(dir);
  if (all.empty()) return std::nullopt;
  return all.back().second;
}

Checkpoint read_checkpoint(const std::string& path) {
  std::error_code ec;
  GCNLAB_CHECK(fs::exists(path, ec), "checkpoint '{}' does not exist", path);
  Checkpoint c;
  if (fs::exists(fs::path(path) / kIndex, ec)) {
    c.path = path;
  } else {
    const auto latest = latest_checkpoint(path);
    GCNLAB_CHECK(latest.has_value(), "'{}' holds no checkpoint (expected {}/{}N/{}, written by --checkpoint)", path,
                 path, kPrefix, kIndex);
    c.path = *latest;
  }
  const std::string index_path = (fs::path(c.path) / kIndex).string();
  json index;
  try {
    index = json::parse(file_bytes(index_path));
    GCNLAB_CHECK(index.value("schema", "") == kSchema, "'{}' is not a gcnlab checkpoint (schema {})", index_path,
                 kSchema);
    c.state.epoch = json_get<int>(index.at("epoch"));
    c.identity = index.at("identity");
    c.run = index.value("run", json::object());
    const auto dims = json_get<std::vector<std::int64_t>>(c.identity.at("model").at("dims"));
    const bool adam = c.identity.at("model").at("optimizer").get<std::string>() == "adam";
    GCNLAB_CHECK(dims.size() >= 2 && c.state.epoch >= 0, "'{}': malformed model dims or epoch", index_path);
    const json& files = index.at("files");
    c.state.params = recorded_parameters(index, c.identity.at("model"));
    GCNLAB_CHECK(!c.state.params.empty(), "'{}': malformed model dims or parameters", index_path);
    auto take = [&](char kind, Weights& out) {
      for (const ParameterShape& param : c.state.params) {
        const std::string file = matrix_name(kind, param.name), p = (fs::path(c.path) / file).string();
        GCNLAB_CHECK(files.contains(file), "'{}' does not list {}", index_path, file);
        GCNLAB_CHECK(fs::exists(p, ec), "checkpoint file '{}' is missing", p);
        const std::string bytes = file_bytes(p);
        const auto expected = json_get<std::size_t>(files.at(file).at("bytes"));
        GCNLAB_CHECK(bytes.size() == expected, "checkpoint file '{}' is {} bytes, {} recorded (truncated?)", p,
                     bytes.size(), expected);
        GCNLAB_CHECK(matches_record(bytes, files.at(file)),
                     "checkpoint file '{}' does not match its recorded hash (damaged)", p);
        NpyMatrix m = read_npy(p);
        GCNLAB_CHECK(m.rows == param.rows && m.cols == param.cols, "'{}' is {} x {}, the model recorded needs {} x {}",
                     p, m.rows, m.cols, param.rows, param.cols);
        out.push_back(std::move(m.data));
      }
    };
    take('W', c.state.w);
    if (adam) take('M', c.state.m), take('V', c.state.v);
    if (index.contains("progress")) read_progress(index.at("progress"), c.state);  // absent: written before it
    c.history = take_record(c.path, kHistory, files);
    c.results = take_record(c.path, kResults, files);
    c.learned_features = c.identity.at("model").value("learn_features", false);
    if (c.learned_features) {  // checked whole here; each rank reads its own rows later (read_feature_rows)
      const std::int64_t n = json_get<std::int64_t>(c.identity.at("dataset").at("nodes"));
      for (std::size_t k = 0; k < feature_files(adam); ++k) {
        const std::string file = kFeatureFiles[k], p = (fs::path(c.path) / file).string();
        GCNLAB_CHECK(files.contains(file), "'{}' does not list {}", index_path, file);
        GCNLAB_CHECK(fs::exists(p, ec), "checkpoint file '{}' is missing", p);
        const auto expected = json_get<std::uintmax_t>(files.at(file).at("bytes"));
        GCNLAB_CHECK(fs::file_size(p) == expected, "checkpoint file '{}' is {} bytes, {} recorded (truncated?)", p,
                     fs::file_size(p), expected);
        const std::string recorded = files.at(file).at("fingerprint").get<std::string>();
        GCNLAB_CHECK(file_fingerprint(p, Fingerprint::kind_of(recorded)) == recorded,
                     "checkpoint file '{}' does not match its recorded hash (damaged)", p);
        const NpyMatrix shape = npy_shape(p);
        GCNLAB_CHECK(shape.rows == n && shape.cols == dims[0], "'{}' is {} x {}, the model recorded needs {} x {}", p,
                     shape.rows, shape.cols, n, dims[0]);
      }
    }
  } catch (const json::exception& e) {
    fail("'{}' is not a valid checkpoint index ({})", index_path, e.what());
  }
  return c;
}

void check_identity(const Checkpoint& c, const json& identity) {
  for (const auto& [group, fields] : identity.items())
    for (const auto& [key, value] : fields.items()) {
      const json* recorded = c.identity.contains(group) && c.identity[group].contains(key) ? &c.identity[group][key]
                                                                                           : nullptr;
      GCNLAB_CHECK(recorded && *recorded == value,
                   "checkpoint '{}' is of another run: its {} {} is {}, this run's is {} (resume with the options "
                   "it was written with)",
                   c.path, group, key, recorded ? recorded->dump() : "missing", value.dump());
    }
}

}  // namespace gcnlab

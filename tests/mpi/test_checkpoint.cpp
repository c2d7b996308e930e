// Checkpoint and resume (issue 16): 2K epochs in one run equal K epochs, a
// checkpoint written to disk and read back, and K more epochs resumed from it,
// bitwise (loss per epoch and final weights) for every strategy at every rank
// count; a checkpoint written under one strategy resumes under another (and
// under serial on one rank) within the equivalence tolerance; a damaged or
// foreign checkpoint is one clear error.

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "algorithms/registry.hpp"
#include "common/comm/process_grid.hpp"
#include "common/core/fingerprint.hpp"
#include "common/results/checkpoint.hpp"
#include "models/registry.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;
namespace fs = std::filesystem;

namespace {

constexpr int kHalf = 3;  // K
const char* kData = "sbm:nodes=1001,classes=5,avg-degree=8,features=19,seed=3";

RunSpec spec_for(const std::string& algo, int epochs, const std::string& optimizer = "adam") {
  RunSpec s;
  s.algo = algo;
  s.partitioner = "random";
  s.model.layers = 3;
  s.model.hidden = 13;
  s.model.dropout = 0.5f;  // masks keyed by epoch: the resumed epochs must draw the same ones
  s.model.weight_decay = 5e-4f;
  s.model.optimizer = optimizer;
  s.model.seed = 7;
  s.train.epochs = epochs;
  return s;
}

RunInfo info_for(const RunSpec& spec, const Dataset& data) {
  RunInfo info = describe_dataset(RunInfo{}, data);
  info.dataset_fingerprint = dataset_fingerprint(data);
  info.algo = spec.algo;
  info.model = spec.model;
  info.train = spec.train;
  info.ranks = world_size();
  return info;
}

// A directory shared by the ranks of this job (rank 0's pid), removed at the end.
struct SharedTempDir {
  std::string path;
  SharedTempDir() {
    int pid = static_cast<int>(::getpid());
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path = (fs::temp_directory_path() / ("gcnlab-test-checkpoint-" + std::to_string(pid))).string();
  }
  ~SharedTempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) fs::remove_all(path);
  }
};

// K epochs under `spec`, then a checkpoint in `dir` (written by rank 0, read by every rank).
Checkpoint first_half(const RunSpec& spec, const Dataset& data, const std::string& dir) {
  RunSpec half = spec;
  half.train.epochs = kHalf;
  Job job(MPI_COMM_WORLD, half);
  job.setup(data);
  job.train();
  const TrainingState s = job.trainer().state();
  REQUIRE(s.epoch == kHalf);
  const RunInfo info = info_for(half, data);
  if (world_rank() == 0) write_checkpoint(dir, s, checkpoint_identity(info, job.trainer().dims()), checkpoint_run(info));
  MPI_Barrier(MPI_COMM_WORLD);
  Checkpoint c = read_checkpoint(dir);
  check_identity(c, checkpoint_identity(info, job.trainer().dims()));
  return c;
}

RunResult resumed(MPI_Comm comm, const RunSpec& spec, const Dataset& data, const TrainingState& s) {
  Job job(comm, spec);
  job.setup(data);
  job.trainer().restore(s);
  return job.train();
}

void require_identical_tail(const RunResult& full, const RunResult& tail) {
  REQUIRE(tail.epochs.size() == full.epochs.size() - kHalf);
  for (std::size_t e = 0; e < tail.epochs.size(); ++e) {
    INFO("epoch " << tail.epochs[e].epoch);
    REQUIRE(tail.epochs[e].epoch == full.epochs[kHalf + e].epoch);
    REQUIRE(tail.epochs[e].loss == full.epochs[kHalf + e].loss);
    REQUIRE(tail.epochs[e].val_acc == full.epochs[kHalf + e].val_acc);
  }
  REQUIRE(tail.final_weights == full.final_weights);
}

}  // namespace

TEST_CASE("every strategy resumed from a checkpoint equals its uninterrupted run bitwise", "[checkpoint]") {
  const Dataset data = load_dataset(kData);
  const SharedTempDir tmp;
  for (const StrategyInfo& info : strategies()) {  // every registered strategy
    const std::string& algo = info.name;
    const auto grids = job_grids(algo, world_size());
    if (grids.empty()) continue;  // serial: the np = 1 run
    for (const std::string optimizer : {"adam", "sgd"}) {
      if (optimizer == "sgd" && algo != "1d") continue;  // the optimiser state is the trainer's, not the strategy's
      RunSpec spec = spec_for(algo, 2 * kHalf, optimizer);
      spec.grid = grids.back();
      if (!info.caps.full_graph) spec.train.batch_size = 150;  // mini-batches: the samples follow the step count
      INFO(algo << " on grid " << format_grid(spec.grid) << " with " << optimizer);
      const RunResult full = run(MPI_COMM_WORLD, spec, data);
      const std::string dir = tmp.path + "/" + algo + "-" + optimizer;
      const Checkpoint c = first_half(spec, data, dir);
      REQUIRE(c.state.m.empty() == (optimizer == "sgd"));
      require_identical_tail(full, resumed(MPI_COMM_WORLD, spec, data, c.state));
    }
  }
  for (const std::string algo : {"serial", "plexus-3d", "scalegnn-4d"}) {  // with ScaleGNN's RMSNorm scales
    if (algo == "serial" && world_size() > 1) continue;
    RunSpec spec = spec_for(algo, 2 * kHalf, "adam");
    spec.model.name = "scalegnn";
    spec.grid = grids_for(algo, world_size()).back();
    if (algo == "plexus-3d") spec.options["permutation"] = "none";
    if (algo == "scalegnn-4d") spec.train.batch_size = 150;
    INFO(algo << " --model scalegnn on grid " << format_grid(spec.grid));
    const RunResult full = run(MPI_COMM_WORLD, spec, data);
    const Checkpoint c = first_half(spec, data, tmp.path + "/" + algo + "-scalegnn");
    REQUIRE(c.state.w.size() == static_cast<std::size_t>(spec.model.layers + 2 + spec.model.layers));  // W, then γ
    require_identical_tail(full, resumed(MPI_COMM_WORLD, spec, data, c.state));
  }
}

TEST_CASE("a checkpoint resumes under another strategy and rank count", "[checkpoint]") {
  const Dataset data = load_dataset(kData);
  const SharedTempDir tmp;
  const RunResult serial = run(MPI_COMM_SELF, spec_for("serial", 2 * kHalf), data);
  const Checkpoint c = first_half(spec_for("1d", 2 * kHalf), data, tmp.path);
  // serial on one rank (every rank runs it on MPI_COMM_SELF)
  require_same_model(serial, resumed(MPI_COMM_SELF, spec_for("serial", 2 * kHalf), data, c.state));
  for (const std::string algo : {"plexus-3d", "2d", "sa-1.5d"}) {
    const auto grids = grids_for(algo, world_size());
    if (grids.empty()) continue;
    RunSpec spec = spec_for(algo, 2 * kHalf);
    spec.grid = grids.front();
    INFO("resumed under " << algo << " on grid " << format_grid(spec.grid));
    require_same_model(serial, resumed(MPI_COMM_WORLD, spec, data, c.state));
  }
}

TEST_CASE("a damaged, foreign or missing checkpoint is one clear error", "[checkpoint]") {
  const Dataset data = load_dataset(kData);
  const SharedTempDir tmp;
  const RunSpec spec = spec_for("1d", 2 * kHalf);
  const Checkpoint c = first_half(spec, data, tmp.path);
  const std::string w1 = c.path + "/W1.npy";

  // another model shape, another optimiser setting, another dataset
  RunSpec wider = spec;
  wider.model.hidden = 14;
  const RunInfo other_info = info_for(wider, data);
  CHECK_THAT(error_message([&] { check_identity(c, checkpoint_identity(other_info, architecture(wider.model, 19, 5).dims)); }),
             Catch::Contains("its model dims is [19,13,13,5], this run's is [19,14,14,5]"));
  RunSpec faster = spec;
  faster.model.lr = 0.02f;
  CHECK_THAT(error_message([&] { check_identity(c, checkpoint_identity(info_for(faster, data), architecture(faster.model, 19, 5).dims)); }),
             Catch::Contains("its model lr is"));
  const Dataset other = load_dataset("sbm:nodes=1001,classes=5,avg-degree=8,features=19,seed=4");
  CHECK_THAT(error_message([&] { check_identity(c, checkpoint_identity(info_for(spec, other), architecture(spec.model, 19, 5).dims)); }),
             Catch::Contains("its dataset fingerprint is"));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    // truncated, then damaged at the same size, then missing; each names the file
    const auto size = fs::file_size(w1);
    std::string bytes(size, '\0');
    std::ifstream(w1, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(size));
    fs::resize_file(w1, size - 10);
    CHECK_THAT(error_message([&] { read_checkpoint(tmp.path); }), Catch::Contains("W1.npy' is " + std::to_string(size - 10) +
                                                                             " bytes, " + std::to_string(size) +
                                                                             " recorded (truncated?)"));
    bytes[size - 1] ^= 1;
    std::ofstream(w1, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(size));
    CHECK_THAT(error_message([&] { read_checkpoint(tmp.path); }), Catch::Contains("W1.npy' does not match its recorded hash"));
    fs::remove(w1);
    CHECK_THAT(error_message([&] { read_checkpoint(c.path); }), Catch::Contains("W1.npy' is missing"));
    CHECK_THAT(error_message([&] { read_checkpoint(tmp.path + "/nowhere"); }), Catch::Contains("does not exist"));
    fs::create_directories(tmp.path + "/empty");
    CHECK_THAT(error_message([&] { read_checkpoint(tmp.path + "/empty"); }), Catch::Contains("holds no checkpoint"));
    std::ofstream(c.path + "/checkpoint.json", std::ios::trunc) << "{\"schema\": \"gcnlab.checkpoint/1\", \"ep";
    CHECK_THAT(error_message([&] { read_checkpoint(c.path); }), Catch::Contains("is not a valid checkpoint index"));
  }
}

TEST_CASE("a checkpoint written before xxHash (FNV-1a records) still reads, checks and resumes", "[checkpoint]") {
  const Dataset data = load_dataset(kData);
  const SharedTempDir tmp;
  const RunSpec spec = spec_for("1d", 2 * kHalf);
  const Checkpoint c = first_half(spec, data, tmp.path);
  const std::string legacy_fingerprint = dataset_fingerprint(data, "0000000000000000");
  REQUIRE(legacy_fingerprint.size() == 16);  // FNV-1a's bare hex digits
  REQUIRE(legacy_fingerprint != dataset_fingerprint(data));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {  // the manifest as gcnlab wrote it before: "fnv1a64" per file, an FNV-1a dataset fingerprint
    const std::string index = c.path + "/checkpoint.json";
    nlohmann::json j = nlohmann::json::parse(std::ifstream(index));
    for (auto& [file, entry] : j["files"].items()) {
      std::ifstream in(c.path + "/" + file, std::ios::binary);
      const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      entry.erase("fingerprint");
      entry["fnv1a64"] = Fingerprint(Fingerprint::Kind::fnv1a).add(bytes).hex();
    }
    j["identity"]["dataset"]["fingerprint"] = legacy_fingerprint;
    std::ofstream(index, std::ios::trunc) << j.dump(1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const Checkpoint old = read_checkpoint(c.path);
  CHECK(old.state.w == c.state.w);
  RunInfo info = info_for(spec, data);
  info.dataset_fingerprint = dataset_fingerprint(data, old.identity["dataset"]["fingerprint"].get<std::string>());
  CHECK(info.dataset_fingerprint == legacy_fingerprint);
  CHECK_NOTHROW(check_identity(old, checkpoint_identity(info, architecture(spec.model, data.features, data.classes).dims)));
  require_identical_tail(run(MPI_COMM_WORLD, spec, data), resumed(MPI_COMM_WORLD, spec, data, old.state));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {  // and a damaged file is still found by its FNV-1a record
    const std::string w1 = c.path + "/W1.npy";
    std::fstream f(w1, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(-1, std::ios::end);
    f.put('\x7f');
    f.close();
    CHECK_THAT(error_message([&] { read_checkpoint(c.path); }), Catch::Contains("W1.npy' does not match its recorded hash"));
  }
}

TEST_CASE("checkpoints keep the newest two and replace a rewritten epoch whole", "[checkpoint][files]") {
  if (world_rank() != 0) return;
  const std::string dir = (fs::temp_directory_path() / ("gcnlab-test-keep-" + std::to_string(::getpid()))).string();
  TrainingState s;
  s.w = {{1, 2, 3, 4, 5, 6}};
  const nlohmann::json identity = {{"model", {{"dims", {2, 3}}, {"optimizer", "sgd"}}}};
  for (int e : {2, 4, 6}) {
    s.epoch = e;
    s.w[0][0] = static_cast<float>(e);
    write_checkpoint(dir, s, identity, nlohmann::json::object());
  }
  fs::create_directories(dir + "/.epoch-000008.tmp-1");  // what a killed writer leaves
  s.epoch = 6, s.w[0][0] = 60;
  write_checkpoint(dir, s, identity, nlohmann::json::object());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"epoch-000004", "epoch-000006"});
  const Checkpoint c = read_checkpoint(dir);
  CHECK(c.state.epoch == 6);
  CHECK(c.state.w[0][0] == 60);
  CHECK(c.state.m.empty());
  fs::remove_all(dir);
}

TEST_CASE("checkpoints name a model's parameters by name and read them back with their shapes",
          "[checkpoint][files]") {
  if (world_rank() != 0) return;
  const std::string dir = (fs::temp_directory_path() / ("gcnlab-test-params-" + std::to_string(::getpid()))).string();
  TrainingState s;
  s.epoch = 3;
  s.params = {{"W0", 2, 3}, {"Wself0", 2, 3}, {"bias0", 1, 3}};  // a model with more than one matrix per layer
  s.w = {{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}, {13, 14, 15}};
  s.m = s.v = s.w;
  const nlohmann::json identity = {{"model", {{"dims", {2, 3}}, {"optimizer", "adam"}}}};
  const std::string written = write_checkpoint(dir, s, identity, nlohmann::json::object());
  for (const char* f : {"W0.npy", "M0.npy", "V0.npy", "Wself0.npy", "Mself0.npy", "Wbias0.npy", "Vbias0.npy"})
    CHECK(fs::exists(fs::path(written) / f));
  const Checkpoint c = read_checkpoint(dir);
  CHECK(c.state.params == s.params);
  CHECK(c.state.w == s.w);
  CHECK(c.state.v == s.v);

  // A name that is not a plain identifier is refused before any file is opened.
  const std::string index = (fs::path(written) / "checkpoint.json").string();
  nlohmann::json j = nlohmann::json::parse(std::ifstream(index));
  j["parameters"][1]["name"] = "../../etc/x";
  std::ofstream(index) << j.dump();
  CHECK_THAT(error_message([&] { read_checkpoint(dir); }), Catch::Contains("malformed parameter '../../etc/x'"));
  fs::remove_all(dir);
}

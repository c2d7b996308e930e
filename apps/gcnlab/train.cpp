// gcnlab train: the epochs of a run set up by start_train, agreed on at every
// boundary (stop signals, checkpoints), then its results, weights and breakdown.
#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/gcnlab/staging.hpp"
#include "apps/gcnlab/train_run.hpp"
#include "common/comm/process_grid.hpp"
#include "common/core/atomic_file.hpp"
#include "common/core/stop_signal.hpp"
#include "common/results/checkpoint.hpp"
#include "gcnlab_config.hpp"

namespace gcnlab::cli {

namespace {

// --dry-run: the modelled wire bytes per category of every rank for one
// epoch, from the strategies' analytic models, without running an epoch.
void print_byte_model(Communicator& world, const Strategy& strategy, Trainer& trainer) {
  world.ledger().set_phase(Phase::report);
  const ByteModel mine = trainer.planned_byte_model();
  const int width = kNumCategories + 1;
  std::vector<double> local(mine.per_category().begin(), mine.per_category().end()), all(static_cast<std::size_t>(width) * world.size());
  local.push_back(static_cast<double>(strategy.nnz_local()));
  world.allgather(std::span<const double>(local), std::span<double>(all), Category::allgather);
  const auto coords = strategy.coords();
  std::vector<std::int32_t> c(coords.begin(), coords.end()), cs(coords.size() * world.size());
  world.allgather(std::span<const std::int32_t>(c), std::span<std::int32_t>(cs), Category::allgather);
  if (world.rank() != 0) return;
  std::vector<int> used;
  for (int k = 0; k < kNumCategories; ++k)
    for (int r = 0; r < world.size(); ++r)
      if (all[r * width + k] > 0) {
        used.push_back(k);
        break;
      }
  const std::string epoch = trainer.minibatch()
                                ? fmt::format("the first epoch: {} mini-batch steps, each on its own sample",
                                              trainer.steps_per_epoch())
                                : "epoch";
  std::string out = fmt::format("modelled wire bytes received per rank and {} (grid {}):\n{:<6} {:<10} {:>10}", epoch,
                                format_grid(strategy.grid()), "rank", "coords", "nnz");
  for (int k : used) out += fmt::format(" {:>15}", to_string(static_cast<Category>(k)));
  out += fmt::format(" {:>15}\n", "total");
  std::vector<double> sum(kNumCategories, 0.0), peak(kNumCategories, 0.0);
  for (int r = 0; r < world.size(); ++r) {
    std::vector<int> rc(cs.begin() + r * coords.size(), cs.begin() + (r + 1) * coords.size());
    out += fmt::format("{:<6} {:<10} {:>10.0f}", r, fmt::format("({})", fmt::join(rc, ",")), all[r * width + kNumCategories]);
    double total = 0;
    for (int k : used) {
      const double b = all[r * width + k];
      out += fmt::format(" {:>15.0f}", b);
      total += b, sum[k] += b, peak[k] = std::max(peak[k], b);
    }
    out += fmt::format(" {:>15.0f}\n", total);
  }
  out += fmt::format("{:<28}", "max");
  for (int k : used) out += fmt::format(" {:>15.0f}", peak[k]);
  out += fmt::format("\n{:<28}", "total");
  for (int k : used) out += fmt::format(" {:>15.0f}", sum[k]);
  fmt::print("{}\n", out);
}

// The agreement at an epoch boundary: one allreduce(max) outside the epoch's
// accounting (Phase::report) of the stop signal any rank caught and of the
// epoch's times and wire bytes, which become the history's record (max over
// ranks). Returns the agreed signal (0: go on); `e` becomes the record.
int agree_at_boundary(MpiCommunicator& world, EpochMetrics& e) {
  const Phase previous = world.ledger().phase();
  world.ledger().set_phase(Phase::report);
  std::array<double, 3 + kNumCategories> v{};
  v[0] = stop::requested(), v[1] = e.time_s, v[2] = e.eval_time_s;
  std::copy(e.wire_bytes.begin(), e.wire_bytes.end(), v.begin() + 3);
  world.allreduce(std::span<double>(v), ReduceOp::max, Category::allreduce);
  e.time_s = v[1], e.eval_time_s = v[2];
  std::copy(v.begin() + 3, v.end(), e.wire_bytes.begin());
  world.ledger().set_phase(previous);
  return static_cast<int>(v[0]);
}

// The stop signal any rank caught (collective, Phase::report): after a checkpoint write.
int agree_on_stop(MpiCommunicator& world) {
  EpochMetrics none;
  return agree_at_boundary(world, none);
}

// The run's opening lines on rank 0: what runs where, and the strategy's description.
void log_start(const Communicator& world, const RunInfo& info) {
  log(world, fmt::format("gcnlab {}: {} on {} ({} nodes, {} nnz, {} features, {} classes), {} rank(s) x {} thread(s) "
                         "({}{})",
                         GCNLAB_VERSION, info.algo, info.dataset_name, info.nodes, info.nnz, info.features,
                         info.classes, world.size(), info.threads, info.provenance.value("threads_source", ""),
                         info.provenance.value("oversubscribed", false)
                             ? fmt::format("; oversubscribed: {} rank(s) x {} thread(s) on {} core(s) per node",
                                           info.provenance.value("ranks_per_node", 0), info.threads,
                                           info.provenance.value("cores_per_node", 0))
                             : ""));
  log(world, info.describe);
}

// The epochs of a run and how they ended.
struct Epochs {
  RunResult result;
  int stopped_by = 0;           // the agreed stop signal (0: every epoch ran)
  std::string stop_checkpoint;  // the checkpoint a stop resumes from
};

// At every epoch boundary the ranks agree on a stop signal (common/core/stop_signal.hpp) and record the
// epoch in the run's history; a periodic checkpoint is written there, and on a stop one at that epoch.
// The last epoch's checkpoint is written after the results, which it records.
Epochs run_epochs(MpiCommunicator& world, TrainRun& run) {
  Trainer& trainer = *run.trainer;
  const int epochs = run.info.train.epochs;
  Epochs out;
  out.result = trainer.train([&](const EpochMetrics& mine) {
    EpochMetrics e = mine;
    int signal = agree_at_boundary(world, e);
    run.history.add(e);
    log(world, fmt::format("epoch {:4d}  loss {:.6f}  train {:.4f}  val {:.4f}  test {:.4f}  time {:.2f} ms",
                           e.epoch, e.loss, e.train_acc, e.val_acc, e.test_acc, e.time_s * 1e3));
    const int done = e.epoch + 1;
    if (done == epochs) return true;
    const bool periodic = run.checkpoint_dir && done % run.checkpoint_every == 0;
    if (periodic) {
      save_checkpoint(world, run, trainer);
      if (!signal) signal = agree_on_stop(world);  // one that arrived while it was written
    }
    if (!signal) return true;
    if (run.checkpoint_dir) out.stop_checkpoint = periodic ? checkpoint_path(*run.checkpoint_dir, done)
                                                           : save_checkpoint(world, run, trainer);
    out.stopped_by = signal;
    return false;
  });
  return out;
}

// The results: every epoch of the history (this segment's last), the timing
// of this segment's; and the breakdown and summary lines on rank 0.
nlohmann::json report(const Communicator& world, TrainRun& run, Epochs& ran) {
  RunResult& r = ran.result;
  r.segment_start = run.history.epochs.size() - r.epochs.size();
  r.epochs = run.history.epochs;
  run.info.segments = run.history.segments;
  if (run.checkpoint_dir && run.checkpoint_seconds > 0) run.info.checkpoint["write_seconds_max"] = run.checkpoint_seconds;
  if (ran.stopped_by)
    run.info.stopped = {{"signal", stop::name(ran.stopped_by)},
                        {"epochs_completed", r.epochs.back().epoch + 1},
                        {"checkpoint", ran.stop_checkpoint.empty() ? nlohmann::json() : nlohmann::json(ran.stop_checkpoint)},
                        {"exit_status", stop::kStoppedExit}};
  const nlohmann::json j = results_json(run.info, r);
  if (const auto& slow = j["summary"]["slow_epochs"]; !slow.empty())
    log(world, fmt::format("gcnlab: warning: epoch(s) {} took more than {}x the median epoch ({:.2f} ms): a burst of "
                           "load from outside the run; the epoch time leaves them out (summary.slow_epochs)",
                           slow.dump(), kSlowEpoch, j["summary"]["epoch_time_median_s"].get<double>() * 1e3));
  log(world, fmt::format("\nper-epoch breakdown over {} timed epoch(s) (time: max/mean over ranks; wire bytes "
                         "received per rank: max/total)\n{}",
                         r.timed_epochs, breakdown_table(r)));
  log(world, fmt::format("epoch time {:.2f} ms, final loss {:.6f}, test accuracy {:.2f}%, nnz per rank max/mean {:.3f}, "
                         "peak memory per rank {:.1f} MiB (backend; analytic {:.1f} MiB, measured/analytic max {:.3f}), "
                         "{:.1f} MiB (process)",
                         j["summary"]["epoch_time_s"].get<double>() * 1e3, r.epochs.back().loss,
                         100 * r.epochs.back().test_acc, j["load_balance"]["nnz_max_over_mean"].get<double>(),
                         j["memory"]["peak_bytes_max"].get<double>() / (1 << 20),
                         j["memory"]["analytic_bytes_max"].get<double>() / (1 << 20),
                         j["memory"]["peak_over_analytic_max"].get<double>(),
                         j["memory"]["host_peak_bytes_max"].get<double>() / (1 << 20)));
  if (const double staging = j["memory"]["staging_host_bytes_max"].get<double>(); staging > 0)
    log(world, fmt::format("staging host buffers (--gpu-comm mpi) {:.1f} MiB per rank at most, pinned, within the "
                           "process's", staging / (1 << 20)));
  return j;
}

// --out and --weights-out, written by rank 0; a stop never replaces complete
// results (nor writes weights). Returns whether complete results were kept.
bool write_outputs(MpiCommunicator& world, const TrainRun& run, const Epochs& ran, const nlohmann::json& j) {
  bool kept = false;
  collectively(world, [&] {
    if (world.rank() != 0) return;
    if (run.out && !(ran.stopped_by && (kept = complete_results(*run.out))))
      write_file_atomically(*run.out, j.dump(1) + "\n");
    if (run.weights_out && !ran.stopped_by) {
      const RunResult& r = ran.result;
      const Architecture arch = run.gnn->architecture(run.model, r.dims.front(), r.dims.back());
      write_weights(*run.weights_out + "/initial", *run.gnn, run.model, arch, r.initial_weights);
      write_weights(*run.weights_out + "/final", *run.gnn, run.model, arch, r.final_weights);
    }
  });
  return kept;
}

// A stopped run's last line: where it resumes from, where its results are.
void log_stop(const Communicator& world, const TrainRun& run, const Epochs& ran, bool kept) {
  const auto& out = run.out;
  const int done = ran.result.epochs.back().epoch + 1, epochs = run.info.train.epochs;
  const std::string results = !out ? "no --out" : kept ? fmt::format("{} kept (it holds complete results)", *out)
                                                       : fmt::format("results so far in {} (status \"stopped\")", *out);
  log(world, ran.stop_checkpoint.empty()
                 ? fmt::format("gcnlab: stopped by {} after {} of {} epochs, without --checkpoint: the run cannot "
                               "resume; {}; exit status {}",
                               stop::name(ran.stopped_by), done, epochs, results, stop::kStoppedExit)
                 : fmt::format("gcnlab: stopped by {} after {} of {} epochs: checkpoint {}; resume with --resume auto "
                               "--checkpoint {} (or --resume {}); {}; exit status {}",
                               stop::name(ran.stopped_by), done, epochs, ran.stop_checkpoint, *run.checkpoint_dir,
                               ran.stop_checkpoint, results, stop::kStoppedExit));
}

}  // namespace

int train(Args& args, MpiCommunicator& world) {
  TrainRun run = start_train(args, world);
  if (run.finished) return 0;
  log_start(world, run.info);
  if (run.dry_run) {
    print_byte_model(world, *run.strategy, *run.trainer);
    return 0;
  }
  Epochs ran = run_epochs(world, run);
  const nlohmann::json j = report(world, run, ran);
  if (!ran.stopped_by && run.checkpoint_dir) save_checkpoint(world, run, *run.trainer, j);
  const bool kept = write_outputs(world, run, ran, j);
  if (!ran.stopped_by) return 0;
  log_stop(world, run, ran, kept);
  return stop::kStoppedExit;
}

}  // namespace gcnlab::cli

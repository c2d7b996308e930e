// Every gcnlab subcommand and option, declared once: the parser (options.cpp,
// CLI11) and each subcommand's --help are made from this table.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "algorithms/registry.hpp"
#include "models/registry.hpp"
#include "apps/gcnlab/options.hpp"
#include "common/data/dataset.hpp"
#include "gcnlab_config.hpp"

namespace gcnlab::cli {

namespace {

using Options = std::vector<OptionSpec>;

Options operator+(Options a, const Options& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const OptionSpec kQuiet{"--quiet", "", "no progress lines (reading large files, METIS, writing shards: a line every "
                                       "5 s on rank 0's stderr with the rate and the time left)"};

OptionSpec dataset_option() {
  return {"--dataset", "SPEC", fmt::format("the graph (see 'dataset SPEC' below; default {})", kDefaultDataset)};
}

const char* kDatasetSpecs = R"(dataset SPEC:
  sbm:nodes=N,classes=K,avg-degree=D,features=F,seed=S[,intra=0.3,signal=0.1,directed=0]
  rmat:scale=S,edge-factor=E,features=F,classes=K,seed=S[,directed=0]
  planetoid:DIR/NAME[,row-normalize=1]      e.g. planetoid:datasets/planetoid/cora
  mtx:FILE.mtx[,features=128,classes=32,seed=1]
  edges:FILE[.gz][,directed=0,base=0,nodes=N,features=128,classes=32,seed=1]   SNAP-style edge list
  ogb:DIR[,split=NAME,directed=0]           OGB node-property directory (raw/*.csv.gz or raw/*.npz, split/NAME/)
  reddit:DIR[,directed=0]                   the Reddit release (reddit_data.npz, reddit_graph.npz)
  gcl:FILE.gcl                              written by gcnlab prepare
  gcl:DIR                                   written by gcnlab prepare --shards (every strategy))";

// "a, b and c"
std::string listing(const std::vector<std::string>& names) {
  if (names.size() <= 1) return names.empty() ? "" : names.front();
  return fmt::format("{} and {}", fmt::join(names.begin(), names.end() - 1, ", "), names.back());
}

// The strategy's options (train, simulate, bench epoch): the ones every
// strategy reads, then each registered strategy's own (algorithms/<name>/entry.cpp).
Options strategy_options() {
  Options out{
      {"--algo", "NAME", fmt::format("the strategy: {} (gcnlab strategies lists them)", fmt::join(strategy_names(), " | "))},
      {"--grid", "G", fmt::format("process grid: its factors joined by x (P for a 1D strategy, RxC, XxYxZ, DxXxYxZ), "
                                  "auto ({}: the performance model's best); default: the strategy's own",
                                  listing(strategies_with(&StrategyCaps::perf_model)))},
      {"--order", "auto|aggregate|transform|LIST",
       fmt::format("forward product per layer: (ÂᵀX)W or Âᵀ(XW); auto: transform where f_l+1 < f_l; LIST: one per "
                   "layer, comma-separated ({} only)", fmt::join(strategies_with(&StrategyCaps::any_order), ", "))},
      {"--comm-precision", "P", fmt::format("{}: the partial-sum all-reduces of the 3D PMM sent in bfloat16 "
                                            "(ScaleGNN Sec. V-B; local math, softmax, loss and dW stay fp32; default fp32)",
                                            fmt::join(strategies_with(&StrategyCaps::bf16_comm), ", ")),
       {"fp32", "bf16"}},
      {"--batch-size", "B", fmt::format("mini-batch training ({}): each step trains on the induced subgraph of B "
                                        "uniformly sampled vertices, off-diagonal weights scaled by (N-1)/(B-1) "
                                        "(ScaleGNN Sec. III-D); B = N: the whole graph",
                                        listing(strategies_with(&StrategyCaps::minibatch)))},
      {"--dp-groups", "D", fmt::format("{} --batch-size: the oracle of D data-parallel groups (each step trains on "
                                       "the block-diagonal union of the D groups' samples)",
                                       listing(strategies_with(&StrategyCaps::dp_oracle)))},
  };
  for (const RegisteredOption& r : registered_options())
    out.push_back({"--" + r.option.name, r.option.metavar,
                   fmt::format("{}: {}", fmt::join(r.strategies, "/"), r.option.help), r.option.choices});
  return out;
}

// The model (train, simulate, bench epoch).
Options model_options() {
  return {
      {"--model", "NAME",
       fmt::format("the model: {} (gcnlab models lists them with the strategies each runs on; default gcn)",
                   fmt::join(model_names(), " | ")),
       model_names()},
      {"--layers", "L", "graph convolutions (default 3)"},
      {"--hidden", "H", "hidden width (default 128)"},
      {"--optimizer", "NAME", "default adam", {"adam", "sgd"}},
      {"--lr", "X", "learning rate (default 0.01)"},
      {"--weight-decay", "X", "default 0"},
      {"--weight-decay-layers", "WHICH", "the layers weight decay applies to (Kipf & Welling: first; default all)",
       {"all", "first"}},
      {"--dropout", "X", "dropout probability in [0, 1) (default 0)"},
      {"--seed", "S", "weights, features, dropout, permutations and samples (default 1)"},
      {"--learn-features", "", "train the input features as parameters (Plexus's node embeddings)"},
      {"--gin-eps", "X", "gin: ε of h'_i = MLP((1 + ε) h_i + Σ_j h_j), its initial value with --train-eps (default 0)"},
      {"--train-eps", "", "gin: learn one ε per GIN layer (PyG's GINConv train_eps=True)"},
      {"--heads", "N", "gat: attention heads of each hidden layer, each --hidden wide (default 8)"},
      {"--concat", "MODE", "gat: the hidden layers' heads concatenated (on) or averaged (off: PyG's concat=False); "
                           "default on", {"on", "off"}},
      {"--output-heads", "N", "gat: attention heads of the output layer, averaged (the GAT paper's PPI model: 6; "
                              "default 1)"},
      {"--attention-dropout", "X", "gat: dropout on the attention coefficients (GATConv's dropout; default 0)"},
  };
}

// A training run (train, bench epoch).
Options run_options() {
  return {
      dataset_option(),
      {"--machine", "NAME|FILE", "profile for --grid auto: local | perlmutter | a file from plan --calibrate"},
      {"--epochs", "N", "default 100 (bench epoch: 6, the first untimed)"},
      {"--threads", "N", "threads per rank; default: OMP_NUM_THREADS, else SLURM_CPUS_PER_TASK, else the CPUs of the "
                         "affinity mask / the ranks on the node (recorded with its source)"},
      {"--partitioner", "NAME|FILE", "block | block-nnz | random | metis | metis-nnz | volume, or a partition file "
                                     "(one part id per vertex); default block (mggcn-1d: random)"},
      {"--backend", "NAME", "default cpu", {"cpu", "cuda"}},
      {"--gpu-comm", "NAME", "--backend cuda's transport: nccl (default; one rank per GPU) or mpi (device buffers "
                             "staged through pinned host buffers, or handed to a CUDA-aware MPI; ranks may share a "
                             "GPU)", {"nccl", "mpi"}},
      {"--steps-per-epoch", "S", "mini-batch steps per epoch (default: ceil(N / (B D)))"},
      {"--eval-every", "K", "a full-graph evaluation every K mini-batch steps besides each epoch's end (0: none)"},
      {"--prefetch", "MODE", "draw and cut the next step's sample on a helper thread while this step trains "
                               "(ScaleGNN Sec. V-A; default on)", {"on", "off"}},
      {"--target-acc", "A", "record the epochs and training seconds until validation accuracy >= A"},
      {"--memory-limit", "SIZE", "per rank (e.g. 512M, 2G): setup fails with the analytic need if it does not fit; "
                                 "default: the host's MemAvailable or cgroup limit over the node's ranks (cpu), the "
                                 "GPU's free memory (cuda)"},
      {"--dry-run", "", "set up, print the modelled bytes per category per rank, no epochs"},
      {"--no-eval", "", "skip the dropout-free evaluation pass per epoch"},
      {"--out", "FILE.json", "results (schema gcnlab.run/1)"},
      {"--weights-out", "DIR", "DIR/initial/W<l>.npy, DIR/final/W<l>.npy"},
      {"--weights-in", "DIR", "start from DIR/W<l>.npy"},
      {"--checkpoint", "DIR", "write DIR/epoch-N/ (weights, Adam state, epoch, configuration) every K epochs and "
                              "after the last; the newest two are kept"},
      {"--checkpoint-every", "K", "default 10"},
      {"--resume", "DIR|auto", "continue from a checkpoint (DIR or its newest epoch-N) under any strategy and rank "
                               "count; auto: from --checkpoint DIR if it holds one, else from epoch 0; a checkpoint "
                               "of the last epoch: nothing to run, exit 0 (the results put in place if missing)"},
      {"--config", "RUN.json", "re-run a recorded run: its command line (results provenance) first, then the "
                               "options given here, which override it"},
  };
}

// train only: the scheduler's stop signals (common/core/stop_signal.hpp; bench epoch leaves them fatal).
Options stop_options() {
  return {
      {"--stop-signal", "SIG", "a signal that stops the run cleanly besides SIGTERM and SIGUSR1 (USR2, INT, HUP, "
                               "URG): at the next epoch boundary a checkpoint (with --checkpoint), the results so far, "
                               "exit status 75"},
      {"--stop-grace", "SECONDS", "after a stop signal, the longest wait for the ranks to stop before the job ends "
                                  "itself without a checkpoint (default 60; 0: no limit)"},
  };
}

// The registries' listings: strategies, models.
std::vector<CommandSpec> registry_specs() {
  std::vector<CommandSpec> s;
  s.push_back({"strategies", "gcnlab strategies [--json]",
               "The registered strategies: name, paper, grid, capabilities and options (--json: for scripts; "
               "experiments/ and plots/ read it).",
               {{"--json", "", "the registry as JSON (schema gcnlab.strategies/1)"}, kQuiet}, "", ""});
  s.push_back({"models", "gcnlab models [--json]",
               "The registered models: name, paper, what each asks of a strategy and the strategies it runs on "
               "(--json: for scripts).",
               {{"--json", "", "the registry as JSON (schema gcnlab.models/1)"}, kQuiet}, "", ""});
  return s;
}

// What reads and writes datasets: info, prepare, partition.
std::vector<CommandSpec> data_specs() {
  std::vector<CommandSpec> s;
  s.push_back({"info", "gcnlab info --dataset SPEC [--shards RxC [--seed S]]",
               "A dataset's facts; with --shards RxC the balance of its adjacency shards (Plexus Table 3).",
               {dataset_option(), {"--shards", "RxC", "adjacency shard balance of every permutation"},
                {"--seed", "S", "permutations (default 1)"}, kQuiet},
               "", kDatasetSpecs});
  s.push_back({"prepare", "gcnlab prepare --dataset SPEC (--out FILE.gcl | --shards KxK [options] --out DIR)",
               "Write a dataset once: a .gcl file, or (--shards) a prepared directory from which train --dataset "
               "gcl:DIR reads per rank only its blocks (K is independent of the rank count).",
               {dataset_option(), {"--out", "FILE|DIR", "where to write"},
                {"--shards", "KxK", "the adjacency cut into K x K blocks"},
                {"--partitioner", "NAME|FILE", "vertex ordering of the prepared directory (default block)"},
                {"--parts", "K", "parts of the partitioner"},
                {"--permutation", "P", "none | single | double | single-balanced | double-balanced (default none)"},
                {"--seed", "S", "permutations (default 1)"},
                {"--round", "N", "across ranks: edges a rank draws (or entries it moves) per exchange round (default 262144)"}, kQuiet},
               "", kDatasetSpecs});
  s.push_back({"partition", "gcnlab partition --dataset SPEC --parts K [--method metis] [--out FILE]",
               "Partition a graph and report the partition's quality; --out writes one part id per vertex.",
               {dataset_option(), {"--parts", "K", "number of parts"},
                {"--method", "NAME", "block | block-nnz | random | metis | metis-nnz | volume (default metis); "
                                     "ptscotch: PT-Scotch, distributed over the job's ranks (mpirun -np P), each "
                                     "holding only its rows (of the shards, for gcl:DIR)"},
                {"--features", "F", "feature width for the communication volume estimate"},
                {"--out", "FILE", "the partition"}, {"--seed", "S", "default 1"}, kQuiet},
               "", kDatasetSpecs});
  return s;
}

// What reads results and models runs: compare, plan, simulate.
std::vector<CommandSpec> planning_specs() {
  std::vector<CommandSpec> s;
  s.push_back({"compare", "gcnlab compare RUN.json [RUN.json ...] [--csv FILE.csv]",
               "Results files side by side; --csv writes one row per run (pandas-ready).",
               {{"--csv", "FILE.csv", "one row per run, every breakdown category"}, kQuiet}, "RUN.json", ""});
  s.push_back({"plan", "gcnlab plan --dataset SPEC --ranks G [--algo LIST|all] | --calibrate RUN.json... --out F | "
                       "--validate RUN.json...",
               "Performance models. Without --algo: plexus-3d's (Plexus Sec. 4), every grid of G ranks ranked. With "
               "--algo (a comma-separated list, or all): every grid of every listed strategy, its volumes from "
               "simulate, priced by the machine profile (intra/inter-node links per group, kernel rates). "
               "--calibrate fits a machine profile to results files of any strategy; --validate compares predicted "
               "and measured epoch times.",
               strategy_options() + model_options() +
                   Options{dataset_option(), {"--ranks", "G", "rank count"},
                           {"--machine", "NAME|FILE", "local | perlmutter | FILE (--calibrate: the base profile)"},
                           {"--calibrate", "", "fit a machine profile to the RUN.json files"},
                           {"--validate", "", "predicted vs measured for the RUN.json files"},
                           {"--name", "NAME", "--calibrate: the profile's name"}, {"--out", "FILE", "JSON output"},
                           kQuiet},
               "RUN.json", kDatasetSpecs});
  s.push_back({"simulate", "gcnlab simulate --algo NAME --ranks P [--grid G] [--dataset SPEC] [options]",
               "Per-rank nnz, modelled bytes and memory for P <= 4096 ranks, from the strategy's own setup on P "
               "threads of one process.",
               strategy_options() + model_options() +
                   Options{dataset_option(), {"--ranks", "P", "simulated rank count"},
                           {"--partitioner", "NAME|FILE", "default: the strategy's"},
                           {"--out", "FILE.json", "the per-rank numbers"}, kQuiet},
               "", kDatasetSpecs});
  return s;
}

// Every command, in the order of gcnlab --help.
std::vector<CommandSpec> make_specs() {
  std::vector<CommandSpec> s;
  s.push_back({"train", "mpirun -np P gcnlab train --algo NAME [options]",
               "Train the GCN with one strategy on every rank of the job.",
               strategy_options() + model_options() + run_options() + stop_options() + Options{kQuiet}, "",
               kDatasetSpecs});
  for (auto part : {registry_specs(), data_specs(), planning_specs()})
    s.insert(s.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  s.push_back({"bench", "gcnlab bench spmm|gemm|elementwise|stream|epoch|collective [options]",
               "Kernel benchmarks (spmm, gemm, elementwise: one key=value line per measurement), the memory's speed "
               "through the backend's copy and axpy (stream: --mib), training epochs (epoch: train's options, each "
               "category's compulsory bytes and GB/s; experiments/bench.sh runs them beside plain PyTorch) or the "
               "collectives over the run's transport (collective: --backend, --gpu-comm, --sizes; every rank of the "
               "job).",
               strategy_options() + model_options() + run_options() +
                   Options{{"--f", "16,64,128", "kernels: the dense widths"},
                           {"--shape", "whole|1d:P", "spmm: the whole Âᵀ or one 1d rank's P column blocks"},
                           {"--sizes", "4K,256K,4M,32M", "collective: the buffers' bytes (all-gather's output, "
                            "reduce-scatter's input, all-to-all's send buffer)"},
                           {"--mib", "M", "stream: each array's MiB (default 256)"},
                           {"--reps", "R", "kernels, collective: timed repetitions (default 10)"},
                           {"--warmup", "W", "kernels, collective: untimed repetitions (default 2)"}, kQuiet},
               "", kDatasetSpecs});
  return s;
}

}  // namespace

const std::vector<CommandSpec>& command_specs() {
  static const std::vector<CommandSpec> specs = make_specs();
  return specs;
}

const CommandSpec* find_command(const std::string& name) {
  for (const CommandSpec& c : command_specs())
    if (c.name == name) return &c;
  return nullptr;
}

std::string usage() {
  std::string out = fmt::format("gcnlab {} — distributed full-graph GCN training under interchangeable strategies\n\n"
                                "usage:\n",
                                GCNLAB_VERSION);
  for (const CommandSpec& c : command_specs()) out += fmt::format("  {}\n", c.synopsis);
  out += "  gcnlab --version\n\ngcnlab COMMAND --help lists a command's options.\n";
  return out;
}

}  // namespace gcnlab::cli

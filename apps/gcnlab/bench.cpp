// gcnlab bench: the local kernels and one training epoch, timed on this rank.
//
// Every measurement is one `key=value` line (kernel, shape, threads, median /
// min / max over the repetitions after the warm-up, GFLOP/s and GB/s of the
// compulsory traffic), so scripts can grep and plot them and a user can set
// them beside another library's numbers (experiments/bench.sh runs the same
// GCN in plain PyTorch on the same graph).
//
//   spmm   Y = Âᵀ X (beta 0) for each width f: the whole graph, or the P column
//          blocks of one 1D block row (--shape 1d:P, hypersparse at large P),
//          with the work memory a trainer lends the backend (Backend::set_spmm_scratch)
//   gemm   the three products of a layer of width f -> f: T W, Xᵀ U, U Wᵀ
//   epoch  a full training epoch under any strategy (the train options), per
//          category from the ledger
//   stream the memory's speed as the backend's own kernels reach it (STREAM's
//          Copy and a Triad without the third array: y = x, y = a x + y on
//          --mib MiB arrays): what the epoch's per-category GB/s set beside
//   collective  every collective the strategies call, over the run's transport
//          (--backend cpu: MPI on host buffers; cuda: --gpu-comm nccl or mpi),
//          on the backend's buffers of each --sizes, the slowest rank timed

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "apps/gcnlab/placement.hpp"
#include "common/comm/node.hpp"
#include "apps/gcnlab/train_run.hpp"
#include "backends/factory.hpp"
#include "common/core/host_memory.hpp"
#include "common/core/threads.hpp"
#include "backends/cpu/spmm.hpp"
#include "common/data/dataset.hpp"
#include "common/core/rng.hpp"
#include "common/data/graph.hpp"
#include "gcnlab_config.hpp"

namespace gcnlab::cli {

namespace {

struct Stats {
  double median = 0, min = 0, max = 0;  // seconds
  double spread = 0;                    // (q3 - q1) / median: how far the repetitions agree
  int reps = 0;
};

// A figure whose repetitions disagree by more than this is flagged (one warning line).
constexpr double kUnstable = 0.10;
// Rounds of repetitions are added until every figure's spread is at most this...
constexpr double kSettled = 0.05;
// ...or this many rounds have run.
constexpr int kMaxRounds = 5;

Stats stats_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  const auto at = [&](double q) {  // linear interpolation between order statistics
    const double x = q * static_cast<double>(n - 1);
    const auto i = static_cast<std::size_t>(x);
    return i + 1 < n ? t[i] + (x - static_cast<double>(i)) * (t[i + 1] - t[i]) : t[i];
  };
  const double median = at(0.5);
  return {median, t.front(), t.back(), median > 0 ? (at(0.75) - at(0.25)) / median : 0.0, static_cast<int>(n)};
}

// Runs each fn `warmup` times, then rounds of `reps` repetitions, interleaved
// (fn0, fn1, ..., fn0, ...) so that the machine's noise falls on all of them
// alike, until every fn's spread has settled or kMaxRounds rounds have run.
std::vector<Stats> time_interleaved(Backend& backend, int warmup, int reps,
                                    const std::vector<std::function<void()>>& fns) {
  std::vector<std::vector<double>> t(fns.size());
  std::vector<Stats> out(fns.size());
  for (int round = 0, total = warmup + reps, r = 0; round < kMaxRounds; ++round, total += reps) {
    for (; r < total; ++r)
      for (std::size_t i = 0; i < fns.size(); ++i) {
        backend.sync();
        const auto t0 = std::chrono::steady_clock::now();
        fns[i]();
        backend.sync();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (r >= warmup) t[i].push_back(s);
      }
    for (std::size_t i = 0; i < fns.size(); ++i) out[i] = stats_of(t[i]);
    if (std::all_of(out.begin(), out.end(), [](const Stats& s) { return s.spread <= kSettled; })) break;
  }
  return out;
}

Stats time_reps(Backend& backend, int warmup, int reps, const std::function<void()>& fn) {
  return time_interleaved(backend, warmup, reps, {fn}).front();
}

// "median_ms=... spread=... reps=...", and for a figure too unstable to trust a
// warning: on stderr, and as a bench=warning line after the figure's own.
std::string timing(const Stats& s, double flops, double bytes, const std::string& what = "") {
  std::string line = fmt::format("median_ms={:.3f} min_ms={:.3f} max_ms={:.3f} spread={:.3f} reps={} gflops={:.2f} gbs={:.2f}",
                                 s.median * 1e3, s.min * 1e3, s.max * 1e3, s.spread, s.reps,
                                 flops / s.median * 1e-9, bytes / s.median * 1e-9);
  if (s.spread > kUnstable) {
    fmt::print(stderr, "gcnlab: warning: {} is unstable: its {} repetitions spread {:.0f}% around the median (more than "
               "{:.0f}%); the machine is busy: measure on a quiet one\n", what, s.reps, 100 * s.spread, 100 * kUnstable);
    line += fmt::format("\nbench=warning kind=unstable spread={:.3f}", s.spread);
  }
  return line;
}

// "16,64,128"
std::vector<std::int64_t> parse_widths(const std::string& text) {
  std::vector<std::int64_t> f;
  for (const std::string& item : split_commas(text)) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    GCNLAB_CHECK(used == item.size() && !item.empty() && v >= 1, "--f takes widths >= 1 like 16,64,128 (got '{}')", text);
    f.push_back(v);
  }
  return f;
}

// A matrix of pseudo-random values in [-1, 1) (the values do not matter, but
// denormals and zeros would flatter or penalise a kernel).
Dense random_dense(Backend& b, std::int64_t rows, std::int64_t cols, std::uint64_t stream) {
  std::vector<float> h(static_cast<std::size_t>(rows * cols));
  for (std::size_t k = 0; k < h.size(); ++k) h[k] = 2.f * rng::uniform(1, stream, k, 0) - 1.f;
  return make_dense(b, rows, cols, h);
}

struct KernelBench {
  std::string spec, shape = "whole", backend_name = "cpu";
  std::vector<std::int64_t> widths{16, 64, 128};
  int threads = 1, warmup = 2, reps = 10;
};

KernelBench parse_kernel_bench(Args& args, bool shapes) {
  KernelBench k;
  k.spec = args.value_or("--dataset", kDefaultDataset);
  if (auto f = args.value("--f")) k.widths = parse_widths(*f);
  if (shapes) k.shape = args.value_or("--shape", "whole");
  k.backend_name = args.value_or("--backend", "cpu");
  k.threads = static_cast<int>(args.integer("--threads", 1, 1));
  k.warmup = static_cast<int>(args.integer("--warmup", 2, 0));
  k.reps = static_cast<int>(args.integer("--reps", 10, 1));
  args.finish();
  const CpuPlacement place = cpu_placement();
  if (const std::string w = binding_warning(k.threads, place); !w.empty()) {
    fmt::print(stderr, "gcnlab: warning: {}\n", w);
    fmt::print("bench=warning kind=binding threads={} cores={} cpus={}\n", k.threads, place.cores, place.cpus);
  }
  return k;
}

// spmm: Âᵀ X for each width. --shape 1d:P: the P column blocks of block row 0
// of P (what one 1d rank multiplies per layer), accumulated into one Y.
void bench_spmm(const KernelBench& k) {
  const Dataset data = load_dataset(k.spec);
  NormalizedAdjacency adj = normalized_graph(data);
  const std::int64_t n = adj.n;
  std::vector<std::int64_t> identity(static_cast<std::size_t>(n));
  std::iota(identity.begin(), identity.end(), 0);
  const InMemoryGraph graph(std::move(adj), GraphLayout{}, {identity});

  int p = 1;
  if (k.shape != "whole") {
    GCNLAB_CHECK(k.shape.rfind("1d:", 0) == 0, "--shape must be whole or 1d:P (got '{}')", k.shape);
    p = parse_widths(k.shape.substr(3)).at(0);
    GCNLAB_CHECK(p >= 1 && p <= n, "--shape 1d:P needs 1 <= P <= {}", n);
  }
  const auto bound = [&](int i) { return n * i / p; };
  auto backend = make_backend(k.backend_name, {k.threads, 0});
  std::vector<Csr> blocks;
  std::int64_t nnz = 0, stored_rows = 0;
  for (int j = 0; j < p; ++j) {
    blocks.push_back(upload(*backend, graph.block(Direction::forward, 0, bound(1), bound(j), bound(j + 1)),
                            p == 1 ? RowStorage::full : RowStorage::sparse_if_smaller));
    nnz += blocks.back().nnz;
    stored_rows += blocks.back().stored_rows();
  }
  const std::int64_t rows = bound(1);
  for (const std::int64_t f : k.widths) {
    const Dense x = random_dense(*backend, n, f, 7);
    Dense y(*backend, rows, f);
    using Kernel = std::function<void(const Csr&, ConstView, View, float)>;
    const auto product = [&](const Kernel& kernel) {
      return [&, kernel] {
        for (int j = 0; j < p; ++j) {
          const ConstView xj{x.data() + bound(j) * f, bound(j + 1) - bound(j), f, f};
          kernel(blocks[j], xj, y, j == 0 ? 0.f : 1.f);
        }
      };
    };
    // The backend's kernel, and on the CPU the plain row loop beside it (the reference).
    std::vector<std::function<void()>> fns{product([&](const Csr& a, ConstView xv, View yv, float beta) {
      backend->spmm(a, xv, yv, beta);
    })};
    std::vector<std::string> names{"backend"};
    if (k.backend_name == "cpu") fns.push_back(product(cpu::spmm_row_loop)), names.push_back("row-loop");
    // the backend's work memory lent as a trainer lends it (the CPU's packed column slabs)
    const std::int64_t widths[] = {f};
    Buffer<float> scratch(*backend, static_cast<std::size_t>(backend->spmm_scratch_bytes(n, widths) / sizeof(float)));
    backend->set_spmm_scratch(scratch.data(), n);
    const std::vector<Stats> s = time_interleaved(*backend, k.warmup, k.reps, fns);
    backend->set_spmm_scratch(nullptr, 0);
    // Compulsory traffic: A once, every X row once, Y written once.
    double bytes = 4.0 * f * (n + rows);
    for (const Csr& b : blocks) bytes += csr_bytes(b);
    for (std::size_t i = 0; i < s.size(); ++i)
      fmt::print("bench=spmm kernel={} backend={} graph={} shape={} rows={} cols={} nnz={} stored_rows={} f={} threads={} "
                 "{}\n",
                 names[i], k.backend_name, data.name, k.shape, rows, n, nnz, stored_rows, f, k.threads,
                 timing(s[i], 2.0 * nnz * f, bytes, fmt::format("spmm {} f={}", names[i], f)));
    std::fflush(stdout);
  }
}

// gemm: a layer f -> f on n rows: T W (n x f x f), Xᵀ U (f x n x f), U Wᵀ (n x f x f).
void bench_gemm(const KernelBench& k) {
  const Dataset data = load_dataset(k.spec);
  const std::int64_t n = data.nodes();
  auto backend = make_backend(k.backend_name, {k.threads, 0});
  for (const std::int64_t f : k.widths) {
    const Dense t = random_dense(*backend, n, f, 1), w = random_dense(*backend, f, f, 2);
    Dense z(*backend, n, f), dw(*backend, f, f);
    struct Case {
      const char* name;
      Op a, b;
      ConstView av, bv;
      View c;
    };
    const Case cases[] = {{"T*W", Op::N, Op::N, t, w, z}, {"Xt*U", Op::T, Op::N, t, z, dw}, {"U*Wt", Op::N, Op::T, z, w, z}};
    for (const Case& c : cases) {
      const Stats s = time_reps(*backend, k.warmup, k.reps, [&] { backend->gemm(c.a, c.b, 1.f, c.av, c.bv, 0.f, c.c); });
      const double bytes = 4.0 * (c.av.size() + c.bv.size() + c.c.size());
      fmt::print("bench=gemm backend={} graph={} op={} m={} n={} k={} threads={} {}\n", k.backend_name,
                 data.name, c.name, c.c.rows, c.c.cols, c.a == Op::N ? c.av.cols : c.av.rows, k.threads,
                 timing(s, 2.0 * n * f * f, bytes, fmt::format("gemm {} f={}", c.name, f)));
      std::fflush(stdout);
    }
  }
}

// elementwise: the model's element-wise passes and the loss on n x f (the
// loss on n x 32 classes, every row a training row).
void bench_elementwise(const KernelBench& k) {
  const Dataset data = load_dataset(k.spec);
  const std::int64_t n = data.nodes();
  auto backend = make_backend(k.backend_name, {k.threads, 0});
  std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  const Buffer<std::int64_t> row_ids = make_buffer<std::int64_t>(*backend, ids);
  for (const std::int64_t f : k.widths) {
    const Dense z = random_dense(*backend, n, f, 3), dx = random_dense(*backend, n, f, 4);
    const Dense bias = random_dense(*backend, 1, f, 5), root = random_dense(*backend, n, f, 6);
    Dense h(*backend, n, f), x(*backend, n, f), g(*backend, n, f), zb = random_dense(*backend, n, f, 3);
    Dense dg = random_dense(*backend, n, f, 4);  // dX, then G in its place
    Buffer<float> sums(*backend, static_cast<std::size_t>(f));
    const DropoutParams drop{1, rng::stream(rng::Stream::dropout), 0.5f};
    std::vector<std::int32_t> labels(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) labels[i] = static_cast<std::int32_t>(i % f);
    const Buffer<std::int32_t> label = make_buffer<std::int32_t>(*backend, labels);
    const Buffer<std::uint8_t> split =
        make_buffer<std::uint8_t>(*backend, std::vector<std::uint8_t>(static_cast<std::size_t>(n), ew::kTrain));
    const std::vector<std::pair<std::string, std::function<void()>>> cases{
        {"relu", [&] { backend->relu(z, h); }},
        {"relu_backward", [&] { backend->relu_backward(dx, z, g); }},
        {"dropout", [&] { backend->dropout(z, x, row_ids.data(), 0, drop); }},
        {"relu_dropout", [&] { backend->relu_dropout(z, x, row_ids.data(), 0, drop); }},
        {"dropout_relu_backward", [&] { backend->dropout_relu_backward(dx, x, drop.scale(), g); }},
        // the layer stack's fused forms: a bias (and GraphSAGE's root term) in the activation's pass, and
        // the bias's gradient in the pass of its backward (z read and written: the fused forms' extra stream)
        {"bias_relu", [&] { backend->bias_relu(zb, {}, bias.data(), h); }},
        {"bias_relu_addend", [&] { backend->bias_relu(zb, root, bias.data(), h); }},
        {"relu_backward_sums", [&] { backend->relu_backward_sums(dx, z, g, sums.data()); }},
        // as the layer stack runs them: H_{l+1} over Z_l, G_{l-1} over dX_l (LayerStack::bind_activations)
        {"bias_relu_in_place", [&] { backend->bias_relu(zb, {}, bias.data(), zb); }},
        {"relu_backward_sums_in_place", [&] { backend->relu_backward_sums(dg, z, dg, sums.data()); }},
        {"dropout_relu_backward_sums", [&] { backend->dropout_relu_backward_sums(dx, x, drop.scale(), g, sums.data()); }},
        {"column_sums", [&] { backend->column_sums(dx, sums.data()); }},
        {"softmax_xent", [&] {
           backend->softmax_xent(z, 0, nullptr, nullptr, label.data(), split.data(), 1.f / static_cast<float>(n), g);
         }},
    };
    for (const auto& [name, fn] : cases) {
      const Stats s = time_reps(*backend, k.warmup, k.reps, fn);
      const int streams = name == "column_sums"        ? 1
                          : name == "bias_relu_addend" ? 4
                          : name.find("backward") != std::string::npos || name == "bias_relu" ? 3
                                                                                               : 2;
      fmt::print("bench=elementwise kernel={} backend={} graph={} n={} f={} threads={} {}\n", name,
                 k.backend_name, data.name, n, f, k.threads,
                 timing(s, 0.0, 4.0 * streams * n * f, fmt::format("elementwise {} f={}", name, f)));
      std::fflush(stdout);
    }
  }
}

// stream: copy and axpy on two arrays of --mib MiB (McCalpin's STREAM Copy and
// Triad, the Triad's third array being its output: 8 and 12 bytes an element),
// with the backend's kernels on its memory, so that it is the figure the same
// kernels and the epoch's categories are measured against.
void bench_stream(Args& args) {
  const std::string backend_name = args.value_or("--backend", "cpu");
  const int threads = static_cast<int>(args.integer("--threads", 1, 1));
  const std::int64_t mib = args.integer("--mib", 256, 1);
  const int warmup = static_cast<int>(args.integer("--warmup", 2, 0)), reps = static_cast<int>(args.integer("--reps", 10, 1));
  args.finish();
  auto backend = make_backend(backend_name, {threads, 0});
  const std::int64_t n = mib * (std::int64_t{1} << 20) / static_cast<std::int64_t>(sizeof(float));
  const Dense x = random_dense(*backend, 1, n, 1);
  Dense y = random_dense(*backend, 1, n, 2);
  const std::vector<std::tuple<std::string, double, std::function<void()>>> cases{
      {"copy", 8.0, [&] { backend->copy(x, y); }}, {"axpy", 12.0, [&] { backend->axpy(0.5f, x, y); }}};
  for (const auto& [name, per_element, fn] : cases) {
    const Stats s = time_reps(*backend, warmup, reps, fn);
    fmt::print("bench=stream kernel={} backend={} mib={} threads={} {}\n", name, backend_name, mib, threads,
               timing(s, 0.0, per_element * static_cast<double>(n), fmt::format("stream {}", name)));
    std::fflush(stdout);
  }
}

// epoch: the train options; one untimed epoch, then --epochs timed ones.
void bench_epoch(Args& args, MpiCommunicator& world) {
  TrainRun run = start_train(args, world, /*default_epochs=*/6, /*stop_signals=*/false);
  if (run.finished) return;  // --resume on a finished run: said so
  GCNLAB_CHECK(!run.dry_run && !run.out && !run.weights_out, "bench epoch takes no --dry-run, --out or --weights-out");
  const RunResult r = run.trainer->train({});
  if (world.rank() != 0) return;
  std::vector<double> t;
  for (std::size_t e = r.epochs.size() > 1 ? 1 : 0; e < r.epochs.size(); ++e) t.push_back(r.epochs[e].time_s);
  const Stats s = stats_of(t);
  const RunInfo& i = run.info;
  const std::string head = fmt::format("backend={} graph={} algo={} ranks={} threads={} n={} nnz={} dims={} dropout={}",
                                       i.backend, i.dataset_name, i.algo, i.ranks, i.threads, i.nodes, i.nnz,
                                       fmt::join(r.dims, "-"), i.model.dropout);
  const std::size_t slow = results_json(i, r)["summary"]["slow_epochs"].size();
  fmt::print("bench=epoch {} epochs={} median_ms={:.3f} min_ms={:.3f} max_ms={:.3f} spread={:.3f} slow_epochs={}\n", head,
             t.size(), s.median * 1e3, s.min * 1e3, s.max * 1e3, s.spread, slow);
  if (s.spread > kUnstable || slow > 0) {
    fmt::print(stderr, "gcnlab: warning: the {} epoch is unstable: its {} timed epochs spread {:.0f}% around the median "
               "and {} took more than {}x it; the machine is busy: measure on a quiet one\n", i.algo, t.size(),
               100 * s.spread, slow, kSlowEpoch);
    fmt::print("bench=warning kind=unstable spread={:.3f} slow_epochs={}\n", s.spread, slow);
  }
  // per category: the mean over timed epochs of the slowest rank; a computing category's compulsory bytes
  // (Work::bytes, that rank's kernels') and their speed, to set beside `bench stream`
  for (int c = 0; c < kNumCategories; ++c) {
    const RankReport* worst = nullptr;
    for (const RankReport& rr : r.ranks)
      if (!worst || rr.per_epoch[c].time_s > worst->per_epoch[c].time_s) worst = &rr;
    const double time_s = worst ? worst->per_epoch[c].time_s : 0.0;
    if (time_s <= 0) continue;
    double bytes = 0;
    for (const Work& w : worst->work[c]) bytes += w.bytes;
    fmt::print("bench=epoch-category {} category={} mean_ms={:.3f} share={:.3f}{}\n", head,
               to_string(static_cast<Category>(c)), time_s * 1e3, time_s / s.median,
               bytes > 0 ? fmt::format(" bytes={:.0f} gbs={:.3f}", bytes, bytes / time_s * 1e-9) : std::string());
  }
  std::fflush(stdout);
}

// What `bench collective` runs on: its arguments, the backend and the transport.
struct CollectiveBench {
  std::string backend_name, transport;
  std::vector<double> sizes;
  int warmup = 0, reps = 0;
  std::unique_ptr<CountingBackend> backend;
  std::unique_ptr<Communicator> device_world;  // null: plain MPI on the host
};

CollectiveBench collective_bench(Args& args, MpiCommunicator& world) {
  CollectiveBench b;
  std::optional<std::string> gpu_comm;
  collectively(world, [&] {  // every rank parses the same arguments
    b.backend_name = args.value_or("--backend", "cpu");
    gpu_comm = args.value("--gpu-comm");
    GCNLAB_CHECK(b.backend_name == "cuda" || gpu_comm != "nccl", "--gpu-comm nccl needs --backend cuda");
    const std::string list = args.value_or("--sizes", "4K,256K,4M,32M");
    for (const std::string& item : split_commas(list)) {
      b.sizes.push_back(parse_bytes(item, "--sizes"));
      GCNLAB_CHECK(b.sizes.back() >= 1, "--sizes takes sizes of at least 1 byte (got '{}')", list);
    }
    b.warmup = static_cast<int>(args.integer("--warmup", 2, 0));
    b.reps = static_cast<int>(args.integer("--reps", 10, 1));
    args.finish();
  });
  const NodeRanks node = node_ranks(world.native());
  collectively(world, [&] {
    b.backend = make_backend(b.backend_name, {1, node.local_rank, node.count, gpu_comm == "mpi", node.nccl_host_ids});
    // --backend cpu --gpu-comm mpi: the staged transport with memcpy for the device's copies (what it costs
    // over plain MPI on the host, and the code path the CPU tests check)
    if (gpu_comm || b.backend_name == "cuda")
      b.device_world = make_device_communicator(*b.backend, world, gpu_comm.value_or("nccl"));
  });
  // one token, as every key=value of the line: mpi, nccl, mpi-staged, mpi-cuda-aware, mpi-staged-memcpy
  b.transport = !b.device_world                        ? "mpi"
                : gpu_comm.value_or("nccl") == "nccl" ? "nccl"
                : b.backend_name == "cuda"            ? "mpi-" + mpi_device_transport()
                                                      : "mpi-staged-memcpy";
  return b;
}

struct CollectiveOp {
  const char* name;
  Category category;
  std::function<void()> run;
};

// One op's repetitions: the slowest rank's times and staging copies, the busiest rank's wire bytes.
struct OpTimes {
  std::vector<double> times, staging;
  double wire = 0;
};

// The ops interleaved (op 0, op 1, ..., op 0, ...): the machine's noise falls on all of them alike.
// Each repetition starts at a barrier with the backend synchronised.
std::vector<OpTimes> time_interleaved(const std::vector<CollectiveOp>& ops, const CollectiveBench& b, Communicator& comm,
                                      MpiCommunicator& world) {
  std::vector<OpTimes> out(ops.size());
  const auto staged_s = [&] { return comm.ledger().lifetime()[static_cast<int>(Category::staging)].time_s; };
  for (int r = 0; r < b.warmup + b.reps; ++r)
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const double before = comm.ledger().lifetime()[static_cast<int>(ops[i].category)].wire_bytes;
      const double staged_before = staged_s();
      world.barrier();
      b.backend->sync();
      const auto t0 = std::chrono::steady_clock::now();
      ops[i].run();
      b.backend->sync();
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double moved = comm.ledger().lifetime()[static_cast<int>(ops[i].category)].wire_bytes - before;
      double copying = staged_s() - staged_before;  // a staged transport's copies (Category::staging)
      for (double* v : {&t, &moved, &copying}) world.allreduce(std::span<double>(v, 1), ReduceOp::max, Category::allreduce);
      if (r >= b.warmup) out[i].times.push_back(t), out[i].staging.push_back(copying), out[i].wire = moved;
    }
  return out;
}

// collective: each collective of --sizes bytes (the nccl-tests convention: the whole buffer — all-reduce's
// and broadcast's operand, all-gather's output, reduce-scatter's input, all-to-all's send buffer, S/P to
// each rank) on the backend's memory, over the transport a run would use. Each repetition's time is the
// slowest rank's (the backend synchronised), and bytes are the ledger's wire bytes of the busiest rank
// (docs/design.md's convention): busbw = those bytes / time.
void bench_collective(Args& args, MpiCommunicator& world) {
  const CollectiveBench b = collective_bench(args, world);
  Communicator& comm = b.device_world ? *b.device_world : static_cast<Communicator&>(world);
  const int p = comm.size();
  const auto P = static_cast<std::int64_t>(p);
  for (const double bytes : b.sizes) {
    const std::int64_t piece = std::max<std::int64_t>(1, static_cast<std::int64_t>(bytes) / 4 / P);  // floats per rank
    const std::int64_t whole = piece * P;
    const Buffer<float> in = make_buffer<float>(*b.backend, std::vector<float>(static_cast<std::size_t>(whole), 1.f));
    Buffer<float> out(*b.backend, static_cast<std::size_t>(whole));
    const std::vector<std::int64_t> counts(static_cast<std::size_t>(p), piece);
    std::vector<std::int64_t> displs(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) displs[static_cast<std::size_t>(r)] = r * piece;
    const std::span<const float> all(in.data(), static_cast<std::size_t>(whole));
    const std::span<float> into(out.data(), static_cast<std::size_t>(whole));
    const std::span<const float> mine = all.first(static_cast<std::size_t>(piece));
    const std::span<float> mine_out = into.first(static_cast<std::size_t>(piece));
    const std::span<const std::int64_t> c(counts), d(displs);
    const std::vector<CollectiveOp> ops = {
        {"allreduce", Category::allreduce, [&] { comm.allreduce(into, ReduceOp::sum, Category::allreduce); }},
        {"allgather", Category::allgather, [&] { comm.allgather(mine, into, Category::allgather); }},
        {"reduce_scatter", Category::reduce_scatter, [&] { comm.reduce_scatter(all, mine_out, Category::reduce_scatter); }},
        {"alltoall", Category::alltoall, [&] { comm.alltoallv(all, c, d, into, c, d, Category::alltoall); }},
        {"broadcast", Category::bcast_dense, [&] { comm.broadcast(into, 0, Category::bcast_dense); }},
    };
    const std::vector<OpTimes> timed = time_interleaved(ops, b, comm, world);
    if (comm.rank() != 0) continue;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Stats st = stats_of(timed[i].times);
      // gbs: the busiest rank's wire bytes per second (bus bandwidth); algbw_gbs: the buffer's
      // staging_ms: the median of the slowest rank's staging copies (0 but for mpi-staged*)
      fmt::print("bench=collective op={} backend={} transport={} ranks={} bytes={} wire_bytes={:.0f} "
                 "algbw_gbs={:.3f} staging_ms={:.3f} {}\n",
                 ops[i].name, b.backend_name, b.transport, p, 4 * whole, timed[i].wire,
                 4.0 * static_cast<double>(whole) / st.median * 1e-9, stats_of(timed[i].staging).median * 1e3,
                 timing(st, 0.0, timed[i].wire, fmt::format("{} of {} bytes", ops[i].name, 4 * whole)));
    }
    std::fflush(stdout);
  }
}

}  // namespace

int bench(const std::string& kind, Args& args, MpiCommunicator& world) {
  collectively(world, [&] {
    GCNLAB_CHECK(kind == "spmm" || kind == "gemm" || kind == "elementwise" || kind == "epoch" || kind == "collective" ||
                     kind == "stream",
                 "bench needs one of spmm, gemm, elementwise, stream, epoch, collective first (got '{}'; see gcnlab "
                 "--help)",
                 kind);
  });
  if (kind == "epoch") {
    bench_epoch(args, world);
    return 0;
  }
  if (kind == "collective") {
    bench_collective(args, world);
    return 0;
  }
  collectively(world, [&] {
    GCNLAB_CHECK(world.size() == 1, "bench {} runs on one rank (the job has {})", kind, world.size());
    if (kind == "stream") return bench_stream(args);
    const KernelBench k = parse_kernel_bench(args, kind == "spmm");
    if (kind == "spmm") bench_spmm(k);
    else if (kind == "gemm") bench_gemm(k);
    else bench_elementwise(k);
  });
  return 0;
}

}  // namespace gcnlab::cli

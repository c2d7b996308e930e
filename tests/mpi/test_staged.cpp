// The staged MPI transport (--gpu-comm mpi, common/comm/staged_communicator.hpp)
// checked on the CPU: the CUDA backend stages device buffers through pinned host
// buffers; here HostStager stages every buffer with memcpy, so the same code
// (buffer sizing, uneven counts and displacements, the messages' offsets, the
// buffers' reuse) runs under every strategy. A device run then checks only what
// needs a device (issue 63).

#include <catch2/catch.hpp>

#include <numeric>

#include "algorithms/registry.hpp"
#include "backends/factory.hpp"
#include "common/comm/process_grid.hpp"
#include "tests/support/harness.hpp"
#include "tests/support/random.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

namespace {

// A staged communicator over a duplicate of the world, and the plain one it must equal.
struct Pair {
  Ledger staged_ledger, plain_ledger;
  MpiCommunicator plain{MPI_COMM_WORLD, plain_ledger, false};
  std::shared_ptr<HostStager> stager = std::make_shared<HostStager>();
  std::unique_ptr<StagedCommunicator> staged;
  Pair() {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    staged = std::make_unique<StagedCommunicator>(std::make_unique<MpiCommunicator>(dup, staged_ledger, true), stager);
  }
};

template <class T>
std::vector<T> iota_from(std::size_t n, T first) {
  std::vector<T> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// The bytes both ledgers recorded per category: the staged transport records what MPI's does
// (and its copies under staging, which the plain one has none of).
void require_same_record(const Ledger& a, const Ledger& b) {
  for (int c = 0; c < kNumCategories; ++c) {
    if (static_cast<Category>(c) == Category::staging) continue;
    const Tally& x = a.lifetime()[static_cast<std::size_t>(c)];
    const Tally& y = b.lifetime()[static_cast<std::size_t>(c)];
    CHECK(x.payload_bytes == y.payload_bytes);
    CHECK(x.wire_bytes == y.wire_bytes);
    CHECK(x.calls == y.calls);
  }
}

}  // namespace

TEST_CASE("the staged MPI transport gives what MPI gives, records the same bytes and reuses its buffers", "[staged]") {
  Pair pr;
  const int p = world_size(), me = world_rank();
  // Uneven counts with an empty rank (rank 1 contributes nothing), sized per rank.
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) counts[static_cast<std::size_t>(r)] = r == 1 ? 0 : 3 + 2 * r;
  const std::int64_t total = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  const auto calls = [&](Communicator& c) {
    std::vector<std::vector<float>> out;
    auto x = random_vector(37, 10 + me);
    c.allreduce(std::span<float>(x), ReduceOp::sum, Category::allreduce);
    out.push_back(x);
    auto b = me == 0 ? random_vector(11, 3) : std::vector<float>(11, 0.f);
    c.broadcast(std::span<float>(b), 0, Category::bcast_dense);
    out.push_back(b);
    const auto mine = random_vector(static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]), 20 + me);
    std::vector<float> gathered(static_cast<std::size_t>(total));
    c.allgather(std::span<const float>(mine), std::span<float>(gathered), std::span<const std::int64_t>(counts),
                Category::allgather);
    out.push_back(gathered);
    const auto full = random_vector(static_cast<std::size_t>(total), 30 + me);
    std::vector<float> reduced(static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]));
    c.reduce_scatter(std::span<const float>(full), std::span<float>(reduced), std::span<const std::int64_t>(counts),
                     Category::reduce_scatter);
    out.push_back(reduced);
    // alltoallv with a gap of 2 elements before each received block: the gaps keep their values
    std::vector<std::int64_t> sc(static_cast<std::size_t>(p)), sd(sc.size()), rc(sc.size()), rd(sc.size());
    std::int64_t so = 0, ro = 0;
    for (int r = 0; r < p; ++r) {
      sc[r] = (me + r) % 3, sd[r] = so, so += sc[r];
      rc[r] = (me + r) % 3, rd[r] = ro + 2, ro += rc[r] + 2;
    }
    const auto send = random_vector(static_cast<std::size_t>(so), 40 + me);
    std::vector<float> recv(static_cast<std::size_t>(ro), -7.f);
    c.alltoallv(std::span<const float>(send), std::span<const std::int64_t>(sc), std::span<const std::int64_t>(sd),
                std::span<float>(recv), std::span<const std::int64_t>(rc), std::span<const std::int64_t>(rd),
                Category::alltoall);
    out.push_back(recv);
    // point to point: a ring, an empty message to self
    const auto ring = iota_from<float>(5 + static_cast<std::size_t>(me), static_cast<float>(100 * me));
    std::vector<float> from(5 + static_cast<std::size_t>((me + p - 1) % p)), none;
    c.exchange<float>({{(me + 1) % p, ring.data(), ring.size()}, {me, none.data(), 0}},
                      {{(me + p - 1) % p, from.data(), from.size()}, {me, none.data(), 0}}, Category::p2p);
    out.push_back(from);
    std::vector<bf16> h(9);
    for (std::size_t k = 0; k < h.size(); ++k) h[k] = to_bf16(0.25f * static_cast<float>(k + static_cast<std::size_t>(me)));
    c.allreduce(std::span<bf16>(h), ReduceOp::sum, Category::allreduce);
    std::vector<float> hf;
    for (const bf16& v : h) hf.push_back(to_float(v));
    out.push_back(hf);
    return out;
  };
  const auto plain = calls(pr.plain), staged = calls(*pr.staged);
  REQUIRE(plain.size() == staged.size());
  for (std::size_t k = 0; k < plain.size(); ++k) {
    INFO("call " << k);
    CHECK(plain[k] == staged[k]);
  }
  require_same_record(pr.plain_ledger, pr.staged_ledger);
  // The staged calls copied their inputs to the host and their outputs back, in a
  // category of their own: at least the all-reduce's 37 floats both ways and the
  // broadcast's 11 one way (the uneven calls copy nothing where a rank's count is 0).
  const Tally& copies = pr.staged_ledger.lifetime()[static_cast<std::size_t>(Category::staging)];
  CHECK(pr.plain_ledger.lifetime()[static_cast<std::size_t>(Category::staging)].calls == 0);
  CHECK(copies.calls >= 3);
  CHECK(copies.payload_bytes >= 4 * (2 * 37 + 11));
  CHECK(copies.time_s > 0);
  CHECK(is_communication(Category::staging));
  // Their host memory, in the run's report: the buffers' capacity (the stager's peak).
  CHECK(pr.staged->staging_host_bytes() == static_cast<double>(pr.staged->staging_bytes()));
  CHECK(pr.plain.staging_host_bytes() == 0);
  // The staging buffers were sized by the first round; the same calls again allocate nothing.
  const std::int64_t allocations = pr.staged->staging_allocations();
  CHECK(allocations > 0);
  CHECK(calls(*pr.staged) == staged);
  CHECK(pr.staged->staging_allocations() == allocations);
  // A split child stages on its own buffers.
  auto half = pr.staged->split(me % 2, me);
  std::vector<double> v{1.0 * me, 2.0};
  half->allreduce(std::span<double>(v), ReduceOp::max, Category::allreduce);
  CHECK(v[1] == 2.0);
}

TEST_CASE("every registered strategy over the staged MPI transport matches serial, bytes = model", "[staged]") {
  // The transport the CUDA backend uses with --gpu-comm mpi, on the CPU backend: every
  // full-graph strategy on the first and the last grid of the job's ranks, directed,
  // dropout on; the attention model once on 1d and 2d.
  const Dataset data = load_dataset("sbm:nodes=1001,classes=5,avg-degree=6,features=19,seed=4,directed=1");
  RunSpec base;
  base.model.hidden = 13;
  base.model.dropout = 0.5f;
  base.train.epochs = 3;
  const RunResult reference = run(MPI_COMM_SELF, base, data);
  for (const StrategyInfo& s : strategies()) {
    if (!s.caps.full_graph) continue;  // scalegnn-4d: its staged runs are the GPU test's
    const auto grids = job_grids(s.name, world_size());
    for (std::size_t g = 0; g < grids.size(); g += std::max<std::size_t>(grids.size() - 1, 1)) {
      RunSpec spec = base;
      spec.algo = s.name;
      spec.grid = grids[g];
      spec.gpu_comm = "mpi";
      INFO(s.name << " " << format_grid(grids[g]));
      const RunResult r = run(MPI_COMM_WORLD, spec, data);
      require_measured_equals_model(r);
      require_same_model(reference, r);
    }
  }
  RunSpec gat = base;
  gat.model.name = "gat";
  gat.model.heads = 2;
  gat.model.optimizer = "sgd", gat.model.lr = 0.5f;
  const RunResult gat_reference = run(MPI_COMM_SELF, gat, data);
  for (const std::string algo : {"1d", "2d"}) {
    const auto grids = job_grids(algo, world_size());
    if (grids.empty()) continue;
    RunSpec spec = gat;
    spec.algo = algo;
    spec.grid = grids.back();
    spec.gpu_comm = "mpi";
    INFO("gat " << algo);
    const RunResult r = run(MPI_COMM_WORLD, spec, data);
    require_measured_equals_model(r);
    require_same_model(gat_reference, r);
  }
}

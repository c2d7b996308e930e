// gcnlab simulate (planning/simulate.hpp) computes, on one process, exactly
// what a real run on P ranks has per rank: nonzeros, modelled bytes (= the
// measured bytes), analytic memory, the work its kernels are given — for
// every strategy and grid at the rank counts the suite runs (every model's
// work: test_models.cpp). And the threaded communicator it runs on moves data
// as MPI does.

#include <catch2/catch.hpp>

#include "algorithms/registry.hpp"
#include "common/comm/process_grid.hpp"
#include "common/comm/thread_communicator.hpp"
#include "common/comm/wire.hpp"
#include "planning/simulate.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;
using namespace gcnlab::test;

TEST_CASE("simulate equals the real run's per-rank nnz, bytes, memory and kernels' work", "[simulate]") {
  const Dataset data = load_dataset("sbm:nodes=701,classes=5,avg-degree=6,features=13,seed=8,directed=1");
  const int p = world_size();
  for (const StrategyInfo& s : strategies())  // every registered full-graph strategy, each grid of the job
    for (const auto& grid : s.caps.full_graph ? job_grids(s.name, p) : std::vector<std::vector<int>>{}) {
      const std::string& algo = s.name;
      RunSpec spec;
      spec.algo = algo;
      spec.grid = grid;
      spec.model.layers = 3;
      spec.model.hidden = 10;
      spec.train.epochs = 2;
      spec.partitioner = algo == "sa-1d" || algo == "sa-1.5d" ? "metis" : "block";
      if (algo == "mggcn-1d") spec.partitioner = "random";
      const RunResult real = run(MPI_COMM_WORLD, spec, data);
      if (world_rank() != 0) continue;  // one process simulates all p ranks
      const Simulation sim = simulate(data, strategy_options(spec), spec.model, p, spec.partitioner);
      if (!grid.empty()) CHECK(sim.grid == grid);
      REQUIRE(sim.ranks.size() == real.ranks.size());
      for (std::size_t r = 0; r < sim.ranks.size(); ++r) {
        INFO(algo << " grid " << format_grid(grid) << " rank " << r);
        const SimulatedRank& s = sim.ranks[r];
        const RankReport& m = real.ranks[r];
        CHECK(s.coords == m.coords);
        CHECK(s.nnz_local == m.nnz_local);
        CHECK(s.memory.total() == m.memory.total());
        CHECK(s.work == m.work);
        for (int c = 0; c < kNumCategories; ++c) {
          if (!is_communication(static_cast<Category>(c))) continue;
          INFO(to_string(static_cast<Category>(c)));
          CHECK(s.model[c] == m.model[c]);
          CHECK(s.model[c] == Approx(m.per_epoch[c].wire_bytes).epsilon(1e-12).margin(1e-9));
        }
      }
    }
}

TEST_CASE("the threaded communicator's collectives", "[simulate][unit]") {
  if (world_rank() != 0) return;
  const int p = 5;
  run_ranks(p, [&](ThreadCommunicator& world) {
    const int me = world.rank();
    std::vector<double> v = {1.0 * me, 2.0 * me};
    world.allreduce(std::span<double>(v), ReduceOp::sum, Category::allreduce);
    CHECK(v == std::vector<double>{10, 20});
    std::int64_t x = me == 3 ? 42 : -1;
    world.broadcast(std::span<std::int64_t>(&x, 1), 3, Category::bcast_dense);
    CHECK(x == 42);
    // uneven all-gather and reduce-scatter: rank r contributes / keeps r + 1 elements
    std::vector<std::int64_t> counts;
    for (int r = 0; r < p; ++r) counts.push_back(r + 1);
    std::vector<float> mine(static_cast<std::size_t>(me + 1), static_cast<float>(me)), all(15);
    world.allgather(std::span<const float>(mine), std::span<float>(all), std::span<const std::int64_t>(counts),
                    Category::allgather);
    CHECK(all == std::vector<float>{0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4});
    std::vector<float> ones(15, 1.f), kept(static_cast<std::size_t>(me + 1));
    world.reduce_scatter(std::span<const float>(ones), std::span<float>(kept), std::span<const std::int64_t>(counts),
                         Category::reduce_scatter);
    CHECK(kept == std::vector<float>(static_cast<std::size_t>(me + 1), 5.f));
    // a split into even and odd ranks, keyed in reverse
    auto half = world.split(me % 2, -me);
    CHECK(half->size() == (me % 2 ? 2 : 3));
    std::int32_t first = me;
    half->broadcast(std::span<std::int32_t>(&first, 1), 0, Category::bcast_dense);
    CHECK(first == (me % 2 ? 3 : 4));  // the highest rank of each half is its rank 0
    // point to point: a ring
    float in = -1, out = static_cast<float>(me);
    world.exchange<float>({{(me + 1) % p, &out, 1}}, {{(me + p - 1) % p, &in, 1}}, Category::p2p);
    CHECK(in == static_cast<float>((me + p - 1) % p));
    // the ledger records what the Communicator counts: (p-1) x 4 bytes for the all-gather's others
    CHECK(world.ledger().lifetime()[static_cast<int>(Category::allgather)].wire_bytes == (15 - (me + 1)) * 4.0);
    // data movement off (a traced epoch): the calls meet and count their bytes, and move nothing
    world.move_data(false);
    std::vector<float> still(15, -1.f);
    world.allgather(std::span<const float>(mine), std::span<float>(still), std::span<const std::int64_t>(counts),
                    Category::allgather);
    world.allreduce(std::span<double>(v), ReduceOp::sum, Category::allreduce);
    half->reduce_scatter(std::span<const float>(ones).first(me % 2 ? 2 : 3), std::span<float>(kept).first(1),
                         Category::reduce_scatter);
    CHECK(still == std::vector<float>(15, -1.f));
    CHECK(v == std::vector<double>{10, 20});
    CHECK(kept[0] == 5.f);
    CHECK(world.ledger().lifetime()[static_cast<int>(Category::allgather)].wire_bytes == 2 * (15 - (me + 1)) * 4.0);
    world.move_data(true);
  });
}

TEST_CASE("a failing simulated rank ends the run with its error, not a hang", "[simulate][unit]") {
  if (world_rank() != 0) return;
  const std::string msg = error_message([] {
    run_ranks(4, [](Communicator& world) {
      if (world.rank() == 2) fail("rank 2 gives up");
      world.barrier();  // the others would wait here forever
    });
  });
  CHECK(msg == "rank 2 gives up");
}

TEST_CASE("a simulated rank that fails inside a collective leaves it after its peers", "[simulate][unit]") {
  if (world_rank() != 0) return;
  // Rank 2 expects two floats from rank 0, which sends one: it fails after the opening rendezvous, while
  // the others copy from its send buffer. It waits for them at the closing one before it unwinds (and frees
  // the buffer); then the others' next rendezvous ends them. ASan's run of this test sees no use after free.
  for (int round = 0; round < 20; ++round) {
    const std::string msg = error_message([] {
      run_ranks(4, [](Communicator& world) {
        const int me = world.rank();
        const std::vector<float> send(1 << 16, static_cast<float>(me));
        std::vector<float> recv(5 << 14);
        const std::int64_t q = 1 << 14;
        std::vector<std::int64_t> counts(4, q), displs = {0, q, 2 * q, 3 * q}, rcounts = counts, rdispls = displs;
        if (me == 2) rcounts = {2 * q, q, q, q}, rdispls = {0, 2 * q, 3 * q, 4 * q};
        world.alltoallv(std::span<const float>(send), std::span<const std::int64_t>(counts),
                        std::span<const std::int64_t>(displs), std::span<float>(recv),
                        std::span<const std::int64_t>(rcounts), std::span<const std::int64_t>(rdispls),
                        Category::alltoall);
        world.barrier();
      });
    });
    CHECK(msg.starts_with("internal error: s.counts[rank_] == recv_counts[r]"));
  }
}

TEST_CASE("a watchdog's error ends the simulated ranks as a failing rank would", "[simulate][unit]") {
  if (world_rank() != 0) return;
  int asked = 0;
  const std::string msg = error_message([&] {
    run_ranks(
        3, [](Communicator& world) {
          for (;;) world.barrier();  // until the run is aborted
        },
        [&]() -> std::optional<std::string> {
          if (++asked < 3) return std::nullopt;
          return "out of patience";
        });
  });
  CHECK(msg == "out of patience");
  CHECK(asked == 3);
  // a watchdog with nothing to say lets the run finish
  run_ranks(2, [](Communicator& world) { world.barrier(); }, []() -> std::optional<std::string> { return {}; });
}

TEST_CASE("with data movement off, each simulated rank's collectives are its own", "[simulate][unit]") {
  if (world_rank() != 0) return;
  std::vector<double> recorded(3);
  run_ranks(3, [&](ThreadCommunicator& world) {
    world.move_data(false);
    // Rank r makes r all-reduces nobody else makes: nothing meets, so nothing waits, and each records its own.
    std::vector<float> v(8, 1.f);
    for (int i = 0; i < world.rank(); ++i) world.allreduce(std::span<float>(v), ReduceOp::sum, Category::allreduce);
    recorded[static_cast<std::size_t>(world.rank())] =
        world.ledger().lifetime()[static_cast<int>(Category::allreduce)].wire_bytes;
    world.barrier();  // a barrier still meets
    world.move_data(true);
  });
  const double one = wire::allreduce(8 * sizeof(float), 3);
  CHECK(recorded == std::vector<double>{0, one, 2 * one});
}

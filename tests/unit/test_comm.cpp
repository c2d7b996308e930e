// The communicator's accounting (docs/design.md wire-byte convention) and the
// process grid's groups. Run at 1, 3 and 4 ranks.

#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstdlib>
#include <string>

#include "common/comm/mpi_communicator.hpp"
#include "common/comm/node.hpp"
#include "common/comm/process_grid.hpp"
#include "common/comm/thread_communicator.hpp"
#include "tests/support/harness.hpp"

using namespace gcnlab;

TEST_CASE("collectives move the right data and record the convention's bytes", "[mpi][comm]") {
  Ledger ledger;
  ledger.set_phase(Phase::epoch);
  MpiCommunicator world(MPI_COMM_WORLD, ledger, false);
  const int p = world.size(), me = world.rank();
  auto wire = [&](Category c) { return ledger.tallies(Phase::epoch)[static_cast<int>(c)].wire_bytes; };
  auto payload = [&](Category c) { return ledger.tallies(Phase::epoch)[static_cast<int>(c)].payload_bytes; };

  std::vector<float> buf(10, me == 1 % p ? 5.f : 0.f);
  world.broadcast(std::span<float>(buf), 1 % p, Category::bcast_dense);
  for (float v : buf) REQUIRE(v == 5.f);
  CHECK(wire(Category::bcast_dense) == (me == 1 % p ? 0 : 40));
  CHECK(payload(Category::bcast_dense) == 40);

  std::vector<double> sum(3, me + 1.0);
  world.allreduce(std::span<double>(sum), ReduceOp::sum, Category::allreduce);
  for (double v : sum) REQUIRE(v == p * (p + 1) / 2.0);
  CHECK(wire(Category::allreduce) == Approx(2.0 * (p - 1) / p * 24));

  std::vector<std::int32_t> mine = {me, -me}, all(2 * p);
  world.allgather(std::span<const std::int32_t>(mine), std::span<std::int32_t>(all), Category::allgather);
  for (int r = 0; r < p; ++r) REQUIRE((all[2 * r] == r && all[2 * r + 1] == -r));
  CHECK(wire(Category::allgather) == (p - 1) * 8);

  std::vector<float> in(2 * p, 1.f), out(2);
  world.reduce_scatter(std::span<const float>(in), std::span<float>(out), Category::reduce_scatter);
  for (float v : out) REQUIRE(v == static_cast<float>(p));
  CHECK(wire(Category::reduce_scatter) == (p - 1) * 8);

  // uneven reduce-scatter: rank r receives r+1 sums
  std::vector<std::int64_t> counts(p);
  for (int r = 0; r < p; ++r) counts[r] = r + 1;
  std::vector<double> vin(p * (p + 1) / 2, 1.0), vout(me + 1);
  world.reduce_scatter(std::span<const double>(vin), std::span<double>(vout), std::span<const std::int64_t>(counts),
                       Category::reduce_scatter);
  for (double v : vout) REQUIRE(v == p);
  CHECK(wire(Category::reduce_scatter) == (p - 1) * 8 + (p - 1) * (me + 1) * 8.0);

  // alltoallv: rank r sends r+1 values of r to every peer
  std::vector<std::int64_t> sc(p, me + 1), sd(p), rc(p), rd(p);
  for (int r = 0; r < p; ++r) sd[r] = r * (me + 1), rc[r] = r + 1, rd[r] = r == 0 ? 0 : rd[r - 1] + rc[r - 1];
  std::vector<float> send(p * (me + 1), static_cast<float>(me)), recv(rd[p - 1] + rc[p - 1]);
  world.alltoallv(std::span<const float>(send), std::span<const std::int64_t>(sc), std::span<const std::int64_t>(sd),
                  std::span<float>(recv), std::span<const std::int64_t>(rc), std::span<const std::int64_t>(rd),
                  Category::alltoall);
  for (int r = 0; r < p; ++r)
    for (std::int64_t k = 0; k < rc[r]; ++k) REQUIRE(recv[rd[r] + k] == static_cast<float>(r));
  double expected = 0;
  for (int r = 0; r < p; ++r)
    if (r != me) expected += (r + 1) * 4.0;
  CHECK(wire(Category::alltoall) == expected);
  CHECK(ledger.tallies(Phase::setup)[static_cast<int>(Category::alltoall)].calls == 0);  // phases kept apart
}

namespace {

// bf16 all-reduces on any transport. Element 0: 1 + 2 + ... + p (small
// integers: exact); element 1: 1 from rank 0 and 2^-9 from every other rank
// (below half a bf16 step at 1: added to 1 one at a time, as the thread
// transport does in rank order, each partial sum rounds back to 1); then a
// nonblocking maximum. Returns the results and the wire bytes recorded
// (Catch2's assertions are checked by the caller, on the main thread).
std::array<double, 5> bf16_allreduces(Communicator& comm) {
  Ledger& ledger = comm.ledger();
  ledger.set_phase(Phase::epoch);
  const int me = comm.rank();
  std::vector<bf16> x{to_bf16(me + 1.f), to_bf16(me == 0 ? 1.f : 0x1p-9f), to_bf16(-1.f * me)};
  const double before = ledger.tallies(Phase::epoch)[static_cast<int>(Category::allreduce)].wire_bytes;
  comm.allreduce(std::span<bf16>(x), ReduceOp::sum, Category::allreduce);
  const double wire = ledger.tallies(Phase::epoch)[static_cast<int>(Category::allreduce)].wire_bytes - before;
  std::vector<bf16> y{to_bf16(static_cast<float>(me)), to_bf16(-0.5f * me)};
  comm.iallreduce(std::span<bf16>(y), ReduceOp::max, Category::allreduce).wait();
  return {to_float(x[0]), to_float(x[1]), wire, to_float(y[0]), to_float(y[1])};
}

void check_bf16_allreduces(const std::array<double, 5>& r, int p, bool in_rank_order) {
  INFO(p << " ranks");
  CHECK(r[0] == p * (p + 1) / 2.0);
  if (in_rank_order) CHECK(r[1] == 1.0);  // fp32 would give 1 + (p-1) 2^-9
  else CHECK(r[1] == Approx(1 + (p - 1) * 0x1p-9).margin(0x1p-7));  // MPI's order: within one bf16 step
  CHECK(r[2] == Approx(2.0 * (p - 1) / p * 3 * 2));  // 3 elements of 2 bytes
  CHECK(r[3] == p - 1.0);
  CHECK(r[4] == 0.0);
}

}  // namespace

TEST_CASE("bf16 all-reduce on MPI and on threads: bf16 partial sums, 2 bytes per element", "[mpi][comm][bf16]") {
  Ledger ledger;
  MpiCommunicator world(MPI_COMM_WORLD, ledger, false);
  check_bf16_allreduces(bf16_allreduces(world), world.size(), false);
  if (world.rank() != 0) return;
  for (int ranks : {1, 3, 5}) {
    std::vector<std::array<double, 5>> results(ranks);
    run_ranks(ranks, [&](Communicator& c) { results[c.rank()] = bf16_allreduces(c); });
    for (const auto& r : results) check_bf16_allreduces(r, ranks, true);
  }
}

TEST_CASE("nonblocking broadcast: the data, the bytes, and the time computation hid", "[mpi][comm]") {
  Ledger ledger;
  ledger.set_phase(Phase::epoch);
  MpiCommunicator world(MPI_COMM_WORLD, ledger, false);
  const int p = world.size(), me = world.rank(), root = p - 1;
  const Tally& bcast = ledger.tallies(Phase::epoch)[static_cast<int>(Category::bcast_dense)];

  std::vector<float> buf(1 << 16, me == root ? 3.f : 0.f);
  const auto posted = Ledger::Clock::now();
  Communicator::Pending pending = world.ibroadcast(std::span<float>(buf), root, Category::bcast_dense);
  CHECK(bcast.wire_bytes == (me == root ? 0 : buf.size() * 4.0));  // recorded when posted
  CHECK(bcast.calls == 1);
  // "compute" for 30 ms without driving progress, then wait: the wall time
  // beyond the posting and the waiting is what the computation hid. The 30 ms
  // count from after ibroadcast returned: hidden + exposed excludes the posting's
  // own time, so it spans them whatever the posting cost (ASan: over 10 us).
  const auto returned = Ledger::Clock::now();
  while (Ledger::Clock::now() - returned < std::chrono::milliseconds(30)) {
  }
  pending.wait();
  const double wall = std::chrono::duration<double>(Ledger::Clock::now() - posted).count();
  for (float v : buf) REQUIRE(v == 3.f);
  CHECK(bcast.hidden_s > 0);
  CHECK(bcast.hidden_s + bcast.time_s >= 0.030);  // exposed + hidden = the operation's wall time
  CHECK(bcast.hidden_s + bcast.time_s <= wall);
  CHECK(pending.test());  // complete; a second wait is a no-op
  pending.wait();
  CHECK(bcast.calls == 1);

  // driven by test(): completion observed by polling; an empty Pending is complete
  std::vector<double> again(1000, me == root ? 1.0 : 0.0);
  Communicator::Pending polled = world.ibroadcast(std::span<double>(again), root, Category::bcast_dense);
  while (!polled.test()) {
  }
  polled.wait();
  for (double v : again) REQUIRE(v == 1.0);
  CHECK(Communicator::Pending().test());
}

TEST_CASE("a REQUIRE failing on one rank ends the job at once (tests/cli/guard.sh)", "[.guard]") {
  int me = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  REQUIRE(me != p - 1);         // the last rank leaves the test here ...
  MPI_Barrier(MPI_COMM_WORLD);  // ... and, without the guard, the others wait here forever
}

TEST_CASE("node ranks: every rank's place on the node and every node rank's NCCL_HOSTID", "[mpi][comm]") {
  int me = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  // Ids of different lengths, one of them unset: rank 1's.
  const auto id_of = [](int r) { return r == 1 ? std::string() : std::string(static_cast<std::size_t>(r + 1), 'a' + r); };
  const char* before = std::getenv("NCCL_HOSTID");
  const std::string saved = before ? before : "";
  if (me == 1) unsetenv("NCCL_HOSTID");
  else setenv("NCCL_HOSTID", id_of(me).c_str(), 1);
  const NodeRanks node = node_ranks(MPI_COMM_WORLD);  // the tests run on one machine: one node
  if (before) setenv("NCCL_HOSTID", saved.c_str(), 1);
  else unsetenv("NCCL_HOSTID");
  CHECK(node.local_rank == me);
  CHECK(node.count == p);
  REQUIRE(node.nccl_host_ids.size() == static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) CHECK(node.nccl_host_ids[r] == id_of(r));
}

TEST_CASE("process grid: coordinates and groups along axes", "[mpi][grid]") {
  Ledger ledger;
  MpiCommunicator world(MPI_COMM_WORLD, ledger, false);
  const int p = world.size();
  for (const auto& dims : {std::vector<int>{p}, std::vector<int>{1, p}, std::vector<int>{p, 1},
                           std::vector<int>{1, p, 1}}) {
    std::vector<std::string> names = {"x", "y", "z"};
    names.resize(dims.size());
    ProcessGrid grid(world, dims, names);
    REQUIRE(grid.rank_of(grid.coords()) == world.rank());
    for (const auto& axis : names) {
      Communicator& g = grid.along({axis});
      REQUIRE(g.size() == grid.dim(axis));
      REQUIRE(g.rank() == grid.coord(axis));  // rank order follows the coordinate
    }
    REQUIRE(grid.along(names).size() == p);
  }
  if (p == 4) {
    ProcessGrid grid(world, {2, 2}, {"r", "c"});
    // process row of rank 3 = {2, 3}; column = {1, 3}
    std::int32_t me = world.rank(), row_sum = me, col_sum = me;
    grid.along({"c"}).allreduce(std::span<std::int32_t>(&row_sum, 1), ReduceOp::sum, Category::allreduce);
    grid.along({"r"}).allreduce(std::span<std::int32_t>(&col_sum, 1), ReduceOp::sum, Category::allreduce);
    const int r = me / 2, c = me % 2;
    CHECK(row_sum == 4 * r + 1);
    CHECK(col_sum == 2 + 2 * c);
  }
}

TEST_CASE("a grid that does not match the job is an error", "[mpi][grid]") {
  Ledger ledger;
  MpiCommunicator world(MPI_COMM_WORLD, ledger, false);
  REQUIRE_THROWS_WITH(ProcessGrid(world, {world.size() + 1}, {"x"}), Catch::Contains("ranks"));
  REQUIRE_THROWS_WITH(parse_grid("2x0"), Catch::Contains("dimension < 1"));
  REQUIRE_THROWS_WITH(parse_grid("2xa"), Catch::Contains("malformed"));
  REQUIRE(parse_grid("2x3x1") == std::vector<int>{2, 3, 1});
}

TEST_CASE("the ledger marks a profiler timeline with its categories (NVTX ranges on CUDA)", "[mpi][comm]") {
  struct Recorder final : Ledger::Marker {
    std::vector<std::string> events;
    void begin(Category c) override { events.emplace_back(to_string(c)); }
    void end() override { events.emplace_back("end"); }
  };
  auto recorder = std::make_shared<Recorder>();
  Ledger ledger;
  ledger.set_marker(recorder);
  MpiCommunicator world(MPI_COMM_WORLD, ledger, false);
  std::vector<float> x(4, 1.f);
  {
    auto t = ledger.time(Category::spmm);
    world.allreduce(std::span<float>(x), ReduceOp::sum, Category::allreduce);  // nested inside the scope
  }
  world.iallreduce(std::span<float>(x), ReduceOp::sum, Category::allreduce).wait();
  CHECK(recorder->events == std::vector<std::string>{"spmm", "allreduce", "end", "end", "allreduce", "end"});
}

// The CUDA backend's host-side decisions, tested without a GPU: how a node's
// ranks share its devices (backends/device_sharing.hpp) and how the edge passes
// walk a block's rows (backends/row_chunks.hpp).

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/device_sharing.hpp"
#include "backends/row_chunks.hpp"
#include "common/core/error.hpp"

using namespace gcnlab;

namespace {

// The one-line refusal's text for these ranks on `devices` over NCCL.
std::string refusal(int local_rank, int devices, const std::vector<std::string>& ids) {
  try {
    place_on_devices(local_rank, devices, ids, false);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("device sharing: a GPU per rank, MPI's shared GPUs, NCCL's one-GPU test mode", "[unit][devices]") {
  SECTION("no more ranks than devices: each rank its own device, whatever NCCL_HOSTID says") {
    for (const bool over_mpi : {false, true}) {
      const std::vector<std::string> ids = {"", "", "same"};
      for (int k = 0; k < 3; ++k) {
        const DevicePlacement p = place_on_devices(k, 4, ids, over_mpi);
        CHECK(p.sharing == DeviceSharing::exclusive);
        CHECK(p.device == k);
        CHECK(p.note.empty());
      }
    }
    CHECK(place_on_devices(1, 2, {"a", "a"}, false).device == 1);  // two ranks, two GPUs: one host is right
  }
  SECTION("over MPI, ranks share: device = local rank mod devices, and a note that times are no scaling") {
    const std::vector<std::string> ids(5, "");
    for (int k = 0; k < 5; ++k) {
      const DevicePlacement p = place_on_devices(k, 2, ids, true);
      CHECK(p.sharing == DeviceSharing::mpi);
      CHECK(p.device == k % 2);
      CHECK_THAT(p.note, Catch::Contains("5 ranks on this node share 2 CUDA devices") &&
                             Catch::Contains("not a GPU-count scaling"));
    }
  }
  SECTION("over NCCL, each rank its own NCCL_HOSTID: the test mode") {
    const std::vector<std::string> ids = {"h0", "h1", "h2", "h3"};
    for (int k = 0; k < 4; ++k) {
      const DevicePlacement p = place_on_devices(k, 1, ids, false);
      CHECK(p.sharing == DeviceSharing::nccl_test);
      CHECK(p.device == 0);
      CHECK_THAT(p.note, Catch::Contains("test mode") && Catch::Contains("4 ranks on this node share 1 CUDA device ") &&
                             Catch::Contains("not a measurement"));
    }
    CHECK(place_on_devices(2, 2, {"a", "b", "c"}, false).device == 0);  // 3 ranks, 2 GPUs
  }
  SECTION("over NCCL without an NCCL_HOSTID per rank: today's refusal, naming the ways out and the reason") {
    const std::string none = refusal(0, 1, {"", ""});
    CHECK_THAT(none, Catch::StartsWith("--backend cuda: 2 ranks on this node and 1 CUDA device: run one rank per GPU") &&
                         Catch::Contains("--gpu-comm mpi") && Catch::Contains("scripts/nccl_host_per_rank.sh") &&
                         Catch::Contains("no rank has one"));
    CHECK(none.find('\n') == std::string::npos);
    CHECK_THAT(refusal(1, 1, {"a", "", "c"}), Catch::Contains("local rank 1 has no NCCL_HOSTID"));
    CHECK_THAT(refusal(0, 2, {"a", "b", "a"}),
               Catch::Contains("3 ranks on this node and 2 CUDA devices") &&
                   Catch::Contains("local ranks 0 and 2 have the same NCCL_HOSTID 'a'"));
    // every rank of the node decides the same: the refusal does not depend on which rank asks
    for (int k = 0; k < 3; ++k) CHECK(refusal(k, 2, {"a", "b", "a"}) == refusal(0, 2, {"a", "b", "a"}));
  }
}

namespace {

// Offsets of rows with these edge counts.
std::vector<std::int64_t> offsets(const std::vector<std::int64_t>& edges) {
  std::vector<std::int64_t> rowptr = {0};
  for (const std::int64_t e : edges) rowptr.push_back(rowptr.back() + e);
  return rowptr;
}

// The walk's contract: every edge of every row is visited once, by its short row's group or by
// exactly one chunk of its long row, chunks of `chunk` edges in order (the last one shorter).
void require_covers(const std::vector<std::int64_t>& rowptr, int heads, const RowChunks& p) {
  const auto stored = static_cast<std::int64_t>(rowptr.size()) - 1;
  REQUIRE(p.first.size() == p.rows.size() + 1);
  REQUIRE(p.chunk_row.size() == static_cast<std::size_t>(p.chunks()));
  REQUIRE(p.lanes >= 1);
  REQUIRE(32 % p.lanes == 0);
  std::vector<std::int64_t> seen(static_cast<std::size_t>(rowptr.back()), 0);
  std::size_t next_long = 0;
  for (std::int64_t s = 0; s < stored; ++s) {
    const std::int64_t edges = rowptr[s + 1] - rowptr[s];
    const bool is_long = next_long < p.rows.size() && p.rows[next_long] == s;
    REQUIRE(is_long == (edges > p.short_edges));
    if (!is_long) {
      for (std::int64_t k = rowptr[s]; k < rowptr[s + 1]; ++k) ++seen[k];
      continue;
    }
    const auto r = static_cast<std::int64_t>(next_long++);
    for (std::int64_t q = p.first[r]; q < p.first[r + 1]; ++q) {
      REQUIRE(p.chunk_row[q] == r);
      const std::int64_t k0 = rowptr[s] + (q - p.first[r]) * p.chunk;
      const std::int64_t k1 = std::min(rowptr[s + 1], k0 + p.chunk);
      REQUIRE(k0 < k1);
      for (std::int64_t k = k0; k < k1; ++k) ++seen[k];
    }
  }
  REQUIRE(next_long == p.rows.size());
  CHECK(std::all_of(seen.begin(), seen.end(), [](std::int64_t n) { return n == 1; }));
  if (32 % heads == 0) CHECK(p.lanes % heads == 0);
}

}  // namespace

TEST_CASE("row chunks: lanes per row from the mean, long rows in chunks of a warp", "[unit][devices]") {
  SECTION("lanes: the fewest lane-steps, ties to more lanes, never fewer than the heads") {
    CHECK(plan_row_chunks(offsets({1, 1, 0, 2}), 1).lanes == 1);
    CHECK(plan_row_chunks(offsets({3, 3, 3, 3}), 1).lanes == 1);      // a lane's 3 steps beat 4 lanes' one step
    CHECK(plan_row_chunks(offsets({12, 12, 12, 12}), 1).lanes == 4);  // 2 lanes x 6 steps = 4 x 3: more lanes
    CHECK(plan_row_chunks(offsets({32, 32}), 1).lanes == 32);         // a warp's width: a warp a row
    CHECK(plan_row_chunks(offsets({100, 100}), 1).lanes == 16);       // 16 x 7 steps < 32 x 4
    CHECK(plan_row_chunks(offsets({1, 1}), 4).lanes == 4);            // one lane a head
    CHECK(plan_row_chunks(offsets({1, 0}), 8).lanes == 8);
    CHECK(plan_row_chunks(offsets({6, 6, 6, 6}), 4).lanes == 8);      // 24 elements: 4 x 6 = 8 x 3
    // a power-law block: its mean (here 30) would give a warp a row; its median row chooses
    std::vector<std::int64_t> skewed(1000, 1);
    skewed[0] = 29'001;
    CHECK(plan_row_chunks(offsets(skewed), 1).lanes == 1);
  }
  SECTION("empty rows and an empty block: nothing long, every row a group's") {
    for (const auto& edges : {std::vector<std::int64_t>{}, std::vector<std::int64_t>{0, 0, 0}}) {
      const auto rowptr = offsets(edges);
      const RowChunks p = plan_row_chunks(rowptr, 1);
      CHECK(p.rows.empty());
      CHECK(p.chunks() == 0);
      require_covers(rowptr, 1, p);
    }
  }
  SECTION("a row of exactly the short limit, one chunk, and one more or less") {
    // 4096 rows of one edge: one lane a head, so a row of more than 8 edges is long; chunks of 256 / heads.
    for (const int heads : {1, 2, 4}) {
      std::vector<std::int64_t> edges(4096, 1);
      const RowChunks base = plan_row_chunks(offsets(edges), heads);
      REQUIRE(base.lanes == heads);
      REQUIRE(base.short_edges == 8);
      REQUIRE(base.chunk == 256 / heads);
      const std::int64_t c = base.chunk;
      for (const std::int64_t e : {std::int64_t{7}, std::int64_t{8}, std::int64_t{9}, c - 1, c, c + 1}) {
        edges[10] = e;
        const auto rowptr = offsets(edges);
        const RowChunks p = plan_row_chunks(rowptr, heads);
        REQUIRE(p.lanes == heads);  // the mean stays under two elements a head
        INFO("heads " << heads << ", a row of " << e << " edges");
        CHECK(p.rows == (e > 8 ? std::vector<std::int64_t>{10} : std::vector<std::int64_t>{}));
        CHECK(p.chunks() == (e <= 8 ? 0 : e <= c ? 1 : 2));
        require_covers(rowptr, heads, p);
      }
    }
  }
  SECTION("a star of 1M edges: the hub in warp chunks, the leaves a lane each") {
    const std::int64_t leaves = 1'000'000;
    std::vector<std::int64_t> edges(static_cast<std::size_t>(leaves + 1), 1);
    edges[0] = leaves;
    const auto rowptr = offsets(edges);
    const RowChunks p = plan_row_chunks(rowptr, 1);
    CHECK(p.lanes == 1);  // 2M edges over 1M + 1 rows: a mean of 1.99
    CHECK(p.rows == std::vector<std::int64_t>{0});
    CHECK(p.chunks() == (leaves + 255) / 256);
    require_covers(rowptr, 1, p);
  }
  SECTION("heads that do not divide a warp: a warp per row, nothing long") {
    const auto rowptr = offsets({1, 2, 5000, 0});
    const RowChunks p = plan_row_chunks(rowptr, 3);
    CHECK(p.lanes == 32);
    CHECK(p.rows.empty());
    require_covers(rowptr, 3, p);
  }
  SECTION("random power-law blocks: every edge once") {
    std::mt19937_64 rng(7);
    for (const int heads : {1, 2, 4, 8, 16, 32}) {
      std::vector<std::int64_t> edges(3000);
      for (auto& e : edges) e = static_cast<std::int64_t>(std::pow(2.0, std::uniform_real_distribution<>(0, 12)(rng))) - 1;
      require_covers(offsets(edges), heads, plan_row_chunks(offsets(edges), heads));
    }
  }
}

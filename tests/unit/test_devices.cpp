// The CUDA backend's host-side decisions, tested without a GPU: how a node's
// ranks share its devices (backends/device_sharing.hpp).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backends/device_sharing.hpp"
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

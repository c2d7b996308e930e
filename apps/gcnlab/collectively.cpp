// What every subcommand shares: the failure agreement (collectively), rank 0's log lines and listings.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "apps/gcnlab/commands.hpp"
#include "common/core/error.hpp"

namespace gcnlab::cli {

namespace {

// The communicator the ranks agree on: a duplicate of the world, made by the
// first agreement (main's, on the command line, which every rank reaches), so
// that an agreement never matches a collective of the phase on the world or its
// splits. It shares the world's ledger: its bytes count as the world's did.
// Never freed (MPI_Finalize does): the process holds one.
Communicator& agreement(MpiCommunicator& world) {
  static MpiCommunicator* dup = [&] {
    MPI_Comm c;
    GCNLAB_MPI(MPI_Comm_dup(world.native(), &c));
    return new MpiCommunicator(c, world.ledger(), /*owned=*/true);
  }();
  return *dup;
}

// How long a failed rank waits for the others to reach the agreement before it
// ends the job: they may be inside a collective of the phase it left.
constexpr auto kAgreementDeadline = std::chrono::seconds(5);

}  // namespace

void collectively(MpiCommunicator& world, const std::function<void()>& fn) {
  std::string message;
  std::int32_t code = 0;
  try {
    fn();
  } catch (const UsageError& e) {
    message = e.what(), code = 2;
  } catch (const std::exception& e) {
    message = e.what(), code = 1;
  }
  Communicator& agree = agreement(world);
  std::int32_t first = code ? agree.rank() : agree.size();
  {
    auto pending = agree.iallreduce(std::span<std::int32_t>(&first, 1), ReduceOp::min, Category::allreduce);
    if (code) {  // the others may be inside a collective this rank left: a deadline, then the whole job ends
      const auto deadline = std::chrono::steady_clock::now() + kAgreementDeadline;
      while (!pending.test()) {
        if (std::chrono::steady_clock::now() > deadline) {
          fmt::print(stderr, "gcnlab: error: {}\n", message);
          std::fflush(stderr);
          MPI_Abort(MPI_COMM_WORLD, code);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    pending.wait();
  }
  if (first == agree.size()) return;
  if (first == agree.rank()) {
    fmt::print(stderr, "gcnlab: error: {}\n", message);
    std::fflush(stderr);
  }
  agree.broadcast(std::span<std::int32_t>(&code, 1), first, Category::bcast_dense);  // the reporting rank's status
  throw ReportedError{code};
}


void log(const Communicator& world, const std::string& line) {
  if (world.rank() == 0) {
    fmt::print(stderr, "{}\n", line);
    std::fflush(stderr);
  }
}

int print_listing(Args& args, MpiCommunicator& world, const std::function<nlohmann::json()>& json,
                  const std::function<std::string()>& text) {
  bool as_json = false;
  collectively(world, [&] {
    as_json = args.flag("--json");
    args.finish();
  });
  if (world.rank() == 0) fmt::print("{}", as_json ? json().dump(1) + "\n" : text());
  return 0;
}

}  // namespace gcnlab::cli

#pragma once
// The gcnlab subcommands. Each runs on every rank of `world`.

#include <functional>
#include <string>
#include <vector>

#include "apps/gcnlab/options.hpp"
#include "common/comm/communicator.hpp"

namespace gcnlab {
struct Dataset;
struct ModelConfig;
}  // namespace gcnlab

namespace gcnlab::cli {

// Thrown after a collective error check has printed the message once: every
// rank exits non-zero without printing again.
struct ReportedError {};

// Runs `fn` on every rank and agrees on the outcome: if any rank failed, the
// lowest failing rank prints its message once and every rank throws
// ReportedError (so no rank is left waiting in a collective).
void collectively(Communicator& world, const std::function<void()>& fn);

int train(Args& args, Communicator& world);
int info(Args& args, Communicator& world);
int prepare(Args& args, Communicator& world);
int partition(Args& args, Communicator& world);
int compare(Args& args, Communicator& world);
int plan(Args& args, Communicator& world);  // plan.cpp

std::string usage();

// --grid auto for plexus-3d: the grid the performance model ranks first (plan.cpp).
std::vector<int> auto_grid(const Dataset& data, const ModelConfig& model, int ranks, const std::string& machine);

}  // namespace gcnlab::cli

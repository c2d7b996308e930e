// gcnlab strategies: the strategies' registry (--json for scripts).
#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "apps/gcnlab/commands.hpp"

namespace gcnlab::cli {

int strategies(Args& args, MpiCommunicator& world) {
  return print_listing(args, world, [] { return strategies_json(); }, [] { return strategies_text(); });
}

}  // namespace gcnlab::cli

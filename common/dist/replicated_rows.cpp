#include "common/dist/replicated_rows.hpp"

#include "common/comm/process_grid.hpp"

namespace gcnlab {

std::vector<int> replicated_grid(const StrategyOptions& opts, int p) {
  const auto replication = static_cast<int>(opts.integer_option("replication"));
  if (!opts.grid.empty()) {
    GCNLAB_CHECK(opts.grid.size() == 2, "--algo {} needs --grid RxC (C = replication c)", opts.algo);
    GCNLAB_CHECK(replication == 0 || replication == opts.grid[1], "--replication {} contradicts --grid {}",
                 replication, format_grid(opts.grid));
    return opts.grid;
  }
  int c = replication;
  if (c == 0) {
    c = 1;
    for (int d = 1; d * d <= p; ++d)
      if (p % d == 0) c = d;
  }
  GCNLAB_CHECK(c >= 1 && p % c == 0, "--replication {} does not divide the {} ranks", c, p);
  return {p / c, c};
}

}  // namespace gcnlab

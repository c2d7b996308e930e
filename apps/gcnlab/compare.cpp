// gcnlab compare: results files side by side (--csv: one row per run).
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/gcnlab/commands.hpp"
#include "common/core/atomic_file.hpp"
#include "common/results/results.hpp"

namespace gcnlab::cli {

int compare(Args& args, MpiCommunicator& world) {
  std::vector<nlohmann::json> runs;
  std::vector<std::string> files;
  std::optional<std::string> csv;
  collectively(world, [&] {
    csv = args.value("--csv");
    files = args.positional();
    args.finish();
    GCNLAB_CHECK(!files.empty(), "compare needs one or more results files");
    for (const auto& f : files) {
      std::ifstream in(f);
      GCNLAB_CHECK(in.good(), "cannot open '{}'", f);
      try {
        runs.push_back(nlohmann::json::parse(in));
        GCNLAB_CHECK(runs.back().value("schema", "") == "gcnlab.run/1", "'{}' is not a gcnlab results file", f);
      } catch (const nlohmann::json::exception& e) {
        fail("'{}' is not valid JSON ({})", f, e.what());
      }
    }
  });
  std::string table;
  collectively(world, [&] {
    try {
      table = comparison_table(runs);
    } catch (const nlohmann::json::exception& e) {
      fail("a results file lacks a field compare reads ({})", e.what());
    }
  });
  if (world.rank() == 0) fmt::print("{}", table);
  if (csv) {
    collectively(world, [&] {
      if (world.rank() == 0) write_file_atomically(*csv, runs_csv(runs, files));
    });
    log(world, fmt::format("wrote {} ({} run(s), one row each)", *csv, runs.size()));
  }
  return 0;
}


}  // namespace gcnlab::cli

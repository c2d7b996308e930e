#include "common/model/rank_report.hpp"

#include <cstring>
#include <type_traits>

#include "common/core/error.hpp"

namespace gcnlab {

namespace {

// A RankReport as plain bytes: the coordinates in a fixed array (a grid has at most 4 axes).
struct Packed {
  static constexpr std::size_t kMaxCoords = 8;
  int rank = 0;
  int ncoords = 0;
  std::array<int, kMaxCoords> coords{};
  std::int64_t nnz_local = 0, edges_local = 0;
  double peak_bytes = 0, host_peak_bytes = 0, staging_host_bytes = 0;
  MemoryNeed memory;
  CategoryTallies per_epoch{}, setup{};
  CategoryWork work{};
  std::array<double, kNumCategories> model{};
  LinkBytes model_link;
};
static_assert(std::is_trivially_copyable_v<Packed>);

}  // namespace

std::vector<RankReport> gather_reports(Communicator& world, const RankReport& mine) {
  GCNLAB_ASSERT(mine.coords.size() <= Packed::kMaxCoords);
  Packed p{mine.rank,           static_cast<int>(mine.coords.size()), {}, mine.nnz_local, mine.edges_local,
           mine.peak_bytes,     mine.host_peak_bytes, mine.staging_host_bytes, mine.memory, mine.per_epoch,
           mine.setup,          mine.work,           mine.model,             mine.model_link};
  std::copy(mine.coords.begin(), mine.coords.end(), p.coords.begin());
  std::vector<Packed> all(static_cast<std::size_t>(world.size()));
  world.allgather(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(&p), sizeof p),
                  std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(all.data()), sizeof p * all.size()),
                  Category::allgather);
  std::vector<RankReport> reports;
  for (const Packed& q : all)
    reports.push_back({q.rank, std::vector<int>(q.coords.begin(), q.coords.begin() + q.ncoords), q.nnz_local,
                       q.edges_local, q.peak_bytes, q.host_peak_bytes, q.staging_host_bytes, q.memory, q.per_epoch,
                       q.setup, q.work, q.model, q.model_link});
  return reports;
}

}  // namespace gcnlab

#include "algorithms/mggcn-1d/mggcn_1d.hpp"

#include <span>

namespace gcnlab {

MgGcn1DStrategy::MgGcn1DStrategy(const StrategyOptions& opts, const StrategyContext& ctx)
    : OneDStrategy(opts, ctx), overlap_(opts.on_off_option("overlap")) {}

std::string MgGcn1DStrategy::describe() const {
  return fmt::format("mggcn-1d (MG-GCN Sec. 4): {}; broadcasts {} the SpMM{}, buffers shared across layers",
                     layout_summary(), overlap_ ? "overlapped with" : "before",
                     overlap_ ? " (BC1, BC2)" : " (--overlap off)");
}

void MgGcn1DStrategy::setup(const Graph& g, const Architecture& arch) {
  OneDStrategy::setup(g, arch);
  if (overlap_) stage2_ = Buffer<float>(backend_, stage_.size());
}

void MgGcn1DStrategy::row_spmm(const std::vector<BroadcastStage>& stages, ConstView in, View out) {
  if (!overlap_ || stages.size() < 2) return OneDStrategy::row_spmm(stages, in, out);
  const std::int64_t f = out.cols;
  GCNLAB_ASSERT(in.ld == f);
  const std::array<float*, 2> bc{stage_.data(), stage2_.data()};
  auto tile = [&](std::size_t s) {  // the dense operand of round s
    const BroadcastStage& st = stages[s];
    return st.root == world_.rank() ? const_cast<float*>(in.data) : bc[s % 2];
  };
  auto post = [&](std::size_t s) {  // the root sends its own rows in place
    return world_.ibroadcast(std::span<float>(tile(s), stages[s].rows * f), stages[s].root, Category::bcast_dense);
  };
  Communicator::Pending next = post(0);
  for (std::size_t s = 0; s < stages.size(); ++s) {
    Communicator::Pending current = std::move(next);
    current.wait();
    if (s + 1 < stages.size()) next = post(s + 1);  // into the buffer round s-1 has released
    const BroadcastStage& st = stages[s];
    GCNLAB_ASSERT(st.block->cols == st.rows);
    auto t = ledger_.time(Category::spmm);
    const double polled = next.polled_s();
    backend_.spmm(*st.block, ConstView{tile(s), st.rows, f, f}, out, s == 0 ? 0.f : 1.f, [&] { next.test(); });
    t.exclude(next.polled_s() - polled);  // the broadcast's progress is charged to it, exposed
  }
}

MemoryNeed MgGcn1DStrategy::memory_need() const {
  MemoryNeed m = OneDStrategy::memory_need();  // the blocks and BC1 (HW is the trainer's work slot)
  m.buffers += bytes_of<float>(static_cast<std::int64_t>(stage2_.size()));
  return m;
}

}  // namespace gcnlab

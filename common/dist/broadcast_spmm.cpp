#include "common/dist/broadcast_spmm.hpp"

#include "common/comm/wire.hpp"

namespace gcnlab {

void broadcast_spmm(Communicator& group, Backend& backend, const std::vector<BroadcastStage>& stages,
                    ConstView local, View y, Buffer<float>& scratch) {
  Ledger& ledger = group.ledger();
  const std::int64_t f = y.cols;
  if (stages.empty()) {
    auto s = ledger.time(Category::spmm);
    backend.fill(y, 0.f);
    return;
  }
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const BroadcastStage& st = stages[k];
    GCNLAB_ASSERT(st.block->cols == st.rows);
    ConstView m{scratch.data(), st.rows, f, f};
    if (st.root == group.rank()) {
      // MPI and NCCL broadcasts never write the root's buffer: send `local` in place.
      GCNLAB_ASSERT(local.ld == f && local.rows == st.rows);
      group.broadcast(std::span<float>(const_cast<float*>(local.data), st.rows * f), st.root, Category::bcast_dense);
      m = local;
    } else {
      GCNLAB_ASSERT(static_cast<std::int64_t>(scratch.size()) >= st.rows * f);
      group.broadcast(std::span<float>(scratch.data(), st.rows * f), st.root, Category::bcast_dense);
    }
    auto s = ledger.time(Category::spmm);
    backend.spmm(*st.block, m, y, k == 0 ? 0.f : 1.f);
  }
}

BlockRowStages block_row_stages(Backend& backend, const Graph& g, const std::vector<std::int64_t>& offsets,
                                std::int64_t r0, std::int64_t r1, int k0, int k1) {
  // only the column blocks of this rank's stages are read
  auto split = [&](Direction d) {
    const HostCsr rows = g.block(d, r0, r1, offsets[k0], offsets[k1]);
    std::vector<Csr> blocks;
    for (int k = k0; k < k1; ++k)
      blocks.push_back(
          upload(backend, extract_block(rows, 0, rows.rows, offsets[k] - offsets[k0], offsets[k + 1] - offsets[k0])));
    return blocks;
  };
  BlockRowStages s;
  s.forward_blocks = split(Direction::forward);
  if (g.directed()) s.backward_blocks = split(Direction::backward);
  const std::vector<Csr>& backward = g.directed() ? s.backward_blocks : s.forward_blocks;
  for (int k = k0; k < k1; ++k) {
    s.forward.push_back({k, offsets[k + 1] - offsets[k], &s.forward_blocks[k - k0]});
    s.backward.push_back({k, offsets[k + 1] - offsets[k], &backward[k - k0]});
    s.nnz += s.forward_blocks[k - k0].nnz;
  }
  return s;
}

double broadcast_spmm_bytes(const Communicator& group, const std::vector<BroadcastStage>& stages, std::int64_t f) {
  double bytes = 0;
  for (const BroadcastStage& st : stages)
    bytes += wire::broadcast(static_cast<double>(st.rows) * f * sizeof(float), st.root == group.rank());
  return bytes;
}

}  // namespace gcnlab

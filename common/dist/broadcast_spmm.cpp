#include "common/dist/broadcast_spmm.hpp"

#include <algorithm>

#include "common/comm/wire.hpp"
#include "common/core/blocks.hpp"

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
  // One stage's block at a time (the host copy of a block row is never whole),
  // hypersparse blocks with compressed rows.
  std::vector<Graph::ColumnRange> columns;
  for (int k = k0; k < k1; ++k) columns.emplace_back(offsets[k], offsets[k + 1]);
  auto split = [&](Direction d) {
    std::vector<Csr> blocks;
    g.column_blocks(d, r0, r1, columns, [&](HostCsr b) {
      blocks.push_back(upload(backend, b, RowStorage::sparse_if_smaller));
    });
    return blocks;
  };
  BlockRowStages s;
  s.forward_blocks = split(Direction::forward);
  if (!g.symmetric()) s.backward_blocks = split(Direction::backward);
  const std::vector<Csr>& backward = !g.symmetric() ? s.backward_blocks : s.forward_blocks;
  for (int k = k0; k < k1; ++k) {
    s.forward.push_back({k, offsets[k + 1] - offsets[k], &s.forward_blocks[k - k0]});
    s.backward.push_back({k, offsets[k + 1] - offsets[k], &backward[k - k0]});
    s.nnz += s.forward_blocks[k - k0].nnz;
  }
  return s;
}

double BlockRowStages::bytes() const {
  double b = 0;
  for (const auto* blocks : {&forward_blocks, &backward_blocks})
    for (const Csr& a : *blocks) b += csr_bytes(a);
  return b;
}

MemoryNeed broadcast_spmm_memory(const BlockRowStages& stages, const std::vector<std::int64_t>& offsets,
                                 const std::vector<std::int64_t>& dims) {
  const std::int64_t fmax = *std::max_element(dims.begin(), dims.end());
  MemoryNeed m;
  m.graph = stages.bytes();
  m.buffers = bytes_of<float>(block_extent(offsets).second * fmax);
  return m;
}

double broadcast_spmm_bytes(const Communicator& group, const std::vector<BroadcastStage>& stages, std::int64_t f) {
  double bytes = 0;
  for (const BroadcastStage& st : stages)
    bytes += wire::broadcast(static_cast<double>(st.rows) * f * sizeof(float), st.root == group.rank());
  return bytes;
}

}  // namespace gcnlab

#include "common/dist/partial_sums.hpp"

namespace gcnlab {

CommPrecision parse_comm_precision(const std::string& s) {
  GCNLAB_CHECK(s == "fp32" || s == "bf16",
               "--comm-precision takes fp32 or bf16 (the 3D PMM all-reduces in bfloat16, ScaleGNN Sec. V-B); got '{}'",
               s);
  return s == "bf16" ? CommPrecision::bf16 : CommPrecision::fp32;
}

std::string to_string(CommPrecision p) { return p == CommPrecision::bf16 ? "bf16" : "fp32"; }

void PartialSums::reserve(std::int64_t elements) {
  GCNLAB_ASSERT(posted_.empty());
  if (precision_ == CommPrecision::bf16 && static_cast<std::int64_t>(staging_.size()) < elements)
    staging_ = Buffer<bf16>(backend_, static_cast<std::size_t>(elements));
}

void PartialSums::allreduce(Communicator& group, View x) {
  Communicator::Pending p = post(group, x);
  p.wait();
  finish();
}

Communicator::Pending PartialSums::post(Communicator& group, View x) {
  GCNLAB_ASSERT(x.ld == x.cols || x.rows <= 1);
  const std::int64_t n = x.rows * x.cols;
  if (precision_ == CommPrecision::fp32)
    return group.iallreduce(std::span<float>(x.data, static_cast<std::size_t>(n)), ReduceOp::sum, Category::allreduce);
  GCNLAB_ASSERT(used_ + n <= static_cast<std::int64_t>(staging_.size()));
  bf16* wire = staging_.data() + used_;
  {
    auto t = group.ledger().time(Category::pack);
    backend_.pack_bf16(x, wire);
  }
  posted_.emplace_back(x, used_);
  ledger_ = &group.ledger();
  used_ += n;
  return group.iallreduce(std::span<bf16>(wire, static_cast<std::size_t>(n)), ReduceOp::sum, Category::allreduce);
}

void PartialSums::finish() {
  if (posted_.empty()) return;
  auto t = ledger_->time(Category::pack);
  for (const auto& [x, offset] : posted_) backend_.unpack_bf16(staging_.data() + offset, x);
  posted_.clear();
  used_ = 0;
}

}  // namespace gcnlab

#pragma once
// A run's byte model, traced. The trainer runs the model's step (its layers'
// forward and backward and the collectives between them) against a ByteTracer:
// a Primitives implementation that moves nothing and, for every call, adds the
// strategy's byte companion for the call's shapes (Strategy::aggregate_bytes,
// linear_bytes, ...). The operands are the trainer's buffers as ModelBuffers
// lays them out on a counting allocator: shapes, no data. So a model written
// against the primitives gets an exact byte model under every strategy (and
// simulate's and plan's figures), and no strategy writes a model's epoch by
// hand; the tests hold the ledger's measured bytes to it.

#include "common/model/strategy.hpp"

namespace gcnlab {

class ByteTracer final : public Primitives {
 public:
  explicit ByteTracer(const Strategy& s) : s_(s) {}

  void aggregate(int l, Direction d, ConstView in, View) override { s_.aggregate_bytes(l, d, in.cols, bytes_); }
  void aggregate_plus(int l, Direction d, ConstView in, const RowTerm&, View) override {
    s_.aggregate_bytes(l, d, in.cols, bytes_);
  }
  void linear(int l, ConstView, ConstView, View) override { s_.linear_bytes(l, bytes_); }
  void linear_backward(int l, ConstView, ConstView, ConstView, View, View* dx) override {
    s_.linear_backward_bytes(l, dx != nullptr, bytes_);
  }
  void linear_add(int l, ConstView, ConstView, View) override { s_.linear_bytes(l, bytes_); }
  void linear_backward_add(int l, ConstView, ConstView, ConstView, View, View) override {
    s_.linear_backward_bytes(l, true, bytes_);
  }
  void align(int l, Direction d, ConstView, View) override { s_.align_bytes(l, d, bytes_); }
  void sum_over_columns(int l, std::span<float>) override { s_.sum_over_columns_bytes(l, bytes_); }
  void sum_over_rows(int l, View per_column) override { s_.sum_over_rows_bytes(l, per_column.size(), bytes_); }
  void reshard(int from, int to, ConstView, View, bool) override { s_.reshard_bytes(from, to, bytes_); }
  void sum_over_layout(int l, View values) override { s_.sum_over_layout_bytes(l, values.size(), bytes_); }
  void attention(int l, const Attention&) override { s_.attention_bytes(l, bytes_); }
  void aggregate_attention(int l, ConstView z, View) override { s_.aggregate_attention_bytes(l, z.cols, bytes_); }
  void attention_backward(int l, const Attention&, ConstView, ConstView, View, View, View) override {
    s_.attention_backward_bytes(l, bytes_);
  }

  const ByteModel& bytes() const { return bytes_; }

 private:
  const Strategy& s_;
  ByteModel bytes_;
};

}  // namespace gcnlab

#pragma once
// Row-major dense matrices in backend memory, and non-owning views of them
// (a view may be a block of rows or columns: element (i, j) is data[i*ld + j]).

#include <cstdint>
#include <span>
#include <vector>

#include "common/matrix/buffer.hpp"

namespace gcnlab {

struct ConstView {
  const float* data = nullptr;
  std::int64_t rows = 0, cols = 0, ld = 0;
  std::int64_t size() const { return rows * cols; }
};

struct View {
  float* data = nullptr;
  std::int64_t rows = 0, cols = 0, ld = 0;
  std::int64_t size() const { return rows * cols; }
  operator ConstView() const { return {data, rows, cols, ld}; }
};

// The values of a contiguous view (one row, or ld = cols) as a span.
inline std::span<float> row_span(View v) {
  return {v.data, static_cast<std::size_t>(v.rows == 1 || v.ld == v.cols ? v.size() : 0)};
}

class Dense {
 public:
  Dense() = default;
  Dense(Allocator& a, std::int64_t rows, std::int64_t cols)
      : rows_(rows), cols_(cols), buf_(a, static_cast<std::size_t>(rows * cols)) {}

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t size() const { return rows_ * cols_; }
  float* data() { return buf_.data(); }
  const float* data() const { return buf_.data(); }
  std::span<float> span() { return buf_.span(); }
  std::span<const float> span() const { return buf_.span(); }
  bool empty() const { return buf_.allocator() == nullptr; }

  View view() { return {data(), rows_, cols_, cols_}; }
  ConstView view() const { return {data(), rows_, cols_, cols_}; }
  operator View() { return view(); }
  operator ConstView() const { return view(); }
  View rows_view(std::int64_t r0, std::int64_t n) { return {data() + r0 * cols_, n, cols_, cols_}; }
  ConstView rows_view(std::int64_t r0, std::int64_t n) const {
    return {data() + r0 * cols_, n, cols_, cols_};
  }

  void upload(std::span<const float> host) { buf_.upload(host); }
  std::vector<float> download() const { return buf_.download(); }

 private:
  std::int64_t rows_ = 0, cols_ = 0;
  Buffer<float> buf_;
};

// A dense matrix of the same allocator and shape as `like`, uninitialised.
inline Dense make_dense(Allocator& a, std::int64_t rows, std::int64_t cols,
                        std::span<const float> host = {}) {
  Dense d(a, rows, cols);
  if (!host.empty()) d.upload(host);
  return d;
}

}  // namespace gcnlab

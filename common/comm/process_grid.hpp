#pragma once
// A Cartesian process grid with named axes and all its sub-communicators,
// built once (DLA-Future's communicator_grid, CombBLAS's CommGrid3D).
//
// Ranks are laid out row-major over the axes: the *last* axis varies fastest.
// along({"c"}) is the group of ranks that differ only in coordinate "c" — for
// a 2D "r x c" grid that is a process row; along({"r"}) is a process column;
// for a 3D "x y z" grid along({"z"}) is a fiber. Every subset of axes has its
// communicator, created collectively in the constructor, so that later calls
// never need to be collective.
//
//   2D grid 2x3, axes (r, c):        rank = r*3 + c
//        c=0  c=1  c=2
//   r=0   0    1    2     <- along({"c"}) for rank 1 = {0,1,2}
//   r=1   3    4    5
//         ^ along({"r"}) for rank 3 = {0,3}

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/comm/communicator.hpp"

namespace gcnlab {

class ProcessGrid {
 public:
  // `world.size()` must equal the product of `dims`.
  ProcessGrid(Communicator& world, std::vector<int> dims, std::vector<std::string> names);

  int ndims() const { return static_cast<int>(dims_.size()); }
  const std::vector<int>& dims() const { return dims_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<int>& coords() const { return coords_; }
  int coord(const std::string& axis) const { return coords_[axis_index(axis)]; }
  int dim(const std::string& axis) const { return dims_[axis_index(axis)]; }

  Communicator& world() const { return world_; }
  // The group of ranks that share every coordinate except those in `axes`.
  Communicator& along(const std::vector<std::string>& axes) const;

  // Rank in world of the given coordinates.
  int rank_of(const std::vector<int>& coords) const;
  std::vector<int> coords_of(int rank) const;

  // "2x3" style text.
  std::string shape() const;

 private:
  int axis_index(const std::string& axis) const;
  unsigned mask_of(const std::vector<std::string>& axes) const;

  Communicator& world_;
  std::vector<int> dims_;
  std::vector<std::string> names_;
  std::vector<int> coords_;
  std::map<unsigned, std::unique_ptr<Communicator>> groups_;
};

// Parses "4", "2x3", "2x2x2"; throws gcnlab::Error on malformed text or a zero dimension.
std::vector<int> parse_grid(const std::string& text);
std::string format_grid(const std::vector<int>& dims);

// Default grids: the most square R x C (R >= C) and the most cube-like X x Y x Z.
std::vector<int> default_grid(int ranks, int ndims);

}  // namespace gcnlab

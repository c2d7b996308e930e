#pragma once
// ByteModel: the modelled wire bytes of one rank for one epoch (or one step),
// traced through the strategy's analytic byte companions (common/model/
// byte_trace.hpp). Each
// term names the group that moves it (its members in world numbering), so the
// totals per category can be checked against the ledger (the tests do, on every
// grid) and a planner can price each term at its group's bandwidth: inside a
// node or across nodes, and how many groups share a node's link
// (planning/perf_model.hpp, Plexus Eq. 4.6 generalised to any group).

#include <array>
#include <vector>

#include "common/comm/communicator.hpp"

namespace gcnlab {

class ByteModel {
 public:
  struct Term {
    Category category;
    Members group;
    double bytes;
  };

  void add(Category c, const Communicator& group, double bytes) { add(c, group.members(), bytes); }
  void add(Category c, const Members& group, double bytes);

  double operator[](Category c) const { return per_category_[static_cast<std::size_t>(c)]; }
  double operator[](int c) const { return per_category_[static_cast<std::size_t>(c)]; }
  const std::array<double, kNumCategories>& per_category() const { return per_category_; }
  // Terms with the same category and group are merged; zero-byte terms are dropped.
  const std::vector<Term>& terms() const { return terms_; }

  ByteModel& operator+=(const ByteModel& o);
  ByteModel& operator*=(double s);

 private:
  std::array<double, kNumCategories> per_category_{};
  std::vector<Term> terms_;
};

// --- topology: Plexus Eq. 4.6 for any group ----------------------------------
// World rank r sits on node r / ranks_per_node (block placement: mpirun's and
// srun's default, and Plexus's, which places Y innermost). A group whose
// members all share the rank's node stays inside it (0). Otherwise its traffic
// crosses the node's link, shared by the groups of the same split that have
// members on the node: ranks_per_node / (members on the rank's node) of them.
// For a Plexus axis of stride s that is min(G_node, s), Eq. 4.6's divisor.
int link_sharing(const Members& group, int world_rank, int ranks_per_node);

// A rank's modelled bytes by the link they cross and by communication
// category: bytes inside the node, and bytes across nodes times their link's
// sharing, so that the communication time is Σ_c intra[c] · (seconds per byte
// of category c inside a node) + inter_weighted / β_inter (planning/perf_model:
// through shared memory a reduce-scatter's byte costs its copy and its
// reduction, an all-to-all's its copy only).
struct LinkBytes {
  std::array<double, kNumCategories> intra{}, inter_weighted{};
  double intra_total() const;
  double inter_weighted_total() const;
};
LinkBytes link_bytes(const ByteModel& model, int world_rank, int ranks_per_node);

}  // namespace gcnlab

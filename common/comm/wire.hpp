#pragma once
// The byte-counting convention (docs/design.md "Wire bytes per call"): bytes
// *received* by one rank under ring/pipelined collectives. The Communicator
// records these for every call and every strategy's analytic model uses the
// same functions, so "measured == model" compares like with like. It is the
// quantity CAGNET (Sec. IV) and Plexus (Eq. 4.5, 4.6) count.
//
//   op (group of p)   payload            wire bytes received by each rank
//   broadcast         message M          non-root: M, root: 0
//   allreduce         buffer M           2 (p-1)/p M
//   allgather         contribution m     (p-1) m
//   reduce_scatter    output m           (p-1) m
//   alltoallv, p2p    per-peer counts    exact bytes received from others

namespace gcnlab::wire {

inline double broadcast(double bytes, bool is_root) { return is_root ? 0.0 : bytes; }
inline double allreduce(double bytes, int p) { return p <= 1 ? 0.0 : 2.0 * (p - 1) / p * bytes; }
inline double allgather(double contribution, int p) { return (p - 1) * contribution; }
inline double reduce_scatter(double output, int p) { return (p - 1) * output; }

}  // namespace gcnlab::wire

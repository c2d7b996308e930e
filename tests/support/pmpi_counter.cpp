#include "tests/support/pmpi_counter.hpp"

#include <mpi.h>

namespace gcnlab::pmpi {

namespace {

Counts counts;  // MPI calls come from one thread per process (MPI_THREAD_FUNNELED use)

double type_size(MPI_Datatype t) {
  int bytes = 0;
  PMPI_Type_size(t, &bytes);
  return bytes;
}
int size_of(MPI_Comm c) {
  int p = 1;
  PMPI_Comm_size(c, &p);
  return p;
}
int rank_in(MPI_Comm c) {
  int r = 0;
  PMPI_Comm_rank(c, &r);
  return r;
}
void add(Family f, double bytes) {
  counts.wire_bytes[static_cast<int>(f)] += bytes;
  ++counts.calls[static_cast<int>(f)];
}
double allreduce_bytes(int count, MPI_Datatype t, MPI_Comm c) {
  const int p = size_of(c);
  return p <= 1 ? 0.0 : 2.0 * (p - 1) / p * count * type_size(t);
}

}  // namespace

std::string_view to_string(Family f) {
  constexpr std::string_view names[] = {"bcast", "allreduce", "allgather", "reduce_scatter", "alltoall", "p2p"};
  return names[static_cast<int>(f)];
}
Counts snapshot() { return counts; }
void reset() { counts = Counts{}; }
bool linked() { return true; }

}  // namespace gcnlab::pmpi

using gcnlab::pmpi::Family;
using namespace gcnlab::pmpi;

extern "C" {

int MPI_Bcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm c) {
  add(Family::bcast, rank_in(c) == root ? 0.0 : count * type_size(t));
  return PMPI_Bcast(buf, count, t, root, c);
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r) {
  add(Family::bcast, rank_in(c) == root ? 0.0 : count * type_size(t));
  return PMPI_Ibcast(buf, count, t, root, c, r);
}

int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  add(Family::allreduce, allreduce_bytes(count, t, c));
  return PMPI_Allreduce(send, recv, count, t, op, c);
}

int MPI_Iallreduce(const void* send, void* recv, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request* r) {
  add(Family::allreduce, allreduce_bytes(count, t, c));
  return PMPI_Iallreduce(send, recv, count, t, op, c, r);
}

int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                  MPI_Datatype recv_type, MPI_Comm c) {
  add(Family::allgather, (size_of(c) - 1) * recv_count * type_size(recv_type));
  return PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, c);
}

int MPI_Allgatherv(const void* send, int send_count, MPI_Datatype send_type, void* recv, const int recv_counts[],
                   const int displs[], MPI_Datatype recv_type, MPI_Comm c) {
  double elements = 0;
  for (int r = 0, me = rank_in(c); r < size_of(c); ++r)
    if (r != me) elements += recv_counts[r];
  add(Family::allgather, elements * type_size(recv_type));
  return PMPI_Allgatherv(send, send_count, send_type, recv, recv_counts, displs, recv_type, c);
}

int MPI_Reduce_scatter_block(const void* send, void* recv, int recv_count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  add(Family::reduce_scatter, (size_of(c) - 1) * recv_count * type_size(t));
  return PMPI_Reduce_scatter_block(send, recv, recv_count, t, op, c);
}

int MPI_Reduce_scatter(const void* send, void* recv, const int recv_counts[], MPI_Datatype t, MPI_Op op,
                       MPI_Comm c) {
  add(Family::reduce_scatter, (size_of(c) - 1) * static_cast<double>(recv_counts[rank_in(c)]) * type_size(t));
  return PMPI_Reduce_scatter(send, recv, recv_counts, t, op, c);
}

int MPI_Alltoallv(const void* send, const int send_counts[], const int send_displs[], MPI_Datatype send_type,
                  void* recv, const int recv_counts[], const int recv_displs[], MPI_Datatype recv_type, MPI_Comm c) {
  double elements = 0;
  for (int r = 0, me = rank_in(c); r < size_of(c); ++r)
    if (r != me) elements += recv_counts[r];
  add(Family::alltoall, elements * type_size(recv_type));
  return PMPI_Alltoallv(send, send_counts, send_displs, send_type, recv, recv_counts, recv_displs, recv_type, c);
}

int MPI_Irecv(void* buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm c, MPI_Request* r) {
  add(Family::p2p, source == rank_in(c) ? 0.0 : count * type_size(t));
  return PMPI_Irecv(buf, count, t, source, tag, c, r);
}

int MPI_Recv(void* buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm c, MPI_Status* s) {
  add(Family::p2p, source == rank_in(c) ? 0.0 : count * type_size(t));
  return PMPI_Recv(buf, count, t, source, tag, c, s);
}

int MPI_Sendrecv(const void* send, int send_count, MPI_Datatype send_type, int dest, int send_tag, void* recv,
                 int recv_count, MPI_Datatype recv_type, int source, int recv_tag, MPI_Comm c, MPI_Status* s) {
  add(Family::p2p, source == rank_in(c) ? 0.0 : recv_count * type_size(recv_type));
  return PMPI_Sendrecv(send, send_count, send_type, dest, send_tag, recv, recv_count, recv_type, source, recv_tag,
                       c, s);
}

}  // extern "C"

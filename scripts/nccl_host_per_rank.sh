#!/usr/bin/env bash
# NCCL's one-GPU test mode: runs a command with an NCCL_HOSTID of this rank's own, so that
# ranks sharing a GPU are NCCL nodes of their own and --gpu-comm nccl takes NCCL's network
# transport over loopback (backends/device_sharing.hpp, docs/clusters.md). Exact, and slow:
# a test of the NCCL code path at P > 1 on one GPU, not a measurement.
#   mpiexec -n 4 bash scripts/nccl_host_per_rank.sh build/gcnlab train --backend cuda --algo 2d ...
set -euo pipefail
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-${SLURM_PROCID:-}}}}
if [ -z "$rank" ]; then
  echo "nccl_host_per_rank.sh: no rank in the environment (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or" \
       "SLURM_PROCID): run it under mpiexec or srun" >&2
  exit 2
fi
export NCCL_HOSTID="gcnlab-$(hostname)-rank-$rank"
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}
exec "$@"

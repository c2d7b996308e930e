#!/usr/bin/env bash
# Plexus's optimisations measured side by side on this machine (Sec. 5):
#   permutation none | single | double (uniform, the paper's) | double-balanced (gcnlab's)
#                (Sec. 5.1: shard balance and epoch time)
#   blocked aggregation --agg-blocks 1 | 4  (Sec. 5.2)
# Runs are interleaved over REPS repetitions (this machine is noisy) and the
# median per configuration is printed; every run's results JSON is kept.
# usage: experiments/plexus_optimisations.sh [OUT_DIR]   (default results/plexus-optimisations)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-results/plexus-optimisations}
gcnlab=${GCNLAB:-$here/build/gcnlab}
dataset=${DATASET:-rmat:scale=15,edge-factor=16,features=64,classes=16,seed=1}
grid=${GRID:-2x2x1}
ranks=${RANKS:-4}
reps=${REPS:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
       OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$out"
configs=("none 1" "single 1" "double 1" "double-balanced 1" "double 4")
for ((r = 0; r < reps; r++)); do
  for c in "${configs[@]}"; do
    set -- $c
    f="$out/$1-agg$2-rep$r.json"
    [[ -s $f ]] && continue
    mpirun -np "$ranks" "$gcnlab" train --algo plexus-3d --grid "$grid" --dataset "$dataset" --epochs 6 --hidden 128 \
      --threads 1 --no-eval --permutation "$1" --agg-blocks "$2" --out "$f" >/dev/null 2>&1
  done
done
/usr/bin/python3 - "$out" "$dataset" "$grid" <<'PY'
import glob, json, statistics, sys
out, dataset, grid = sys.argv[1:]
print(f"plexus-3d on {dataset}, grid {grid} (median over repetitions; times max over ranks)")
print(f"{'permutation':<16}{'agg-blocks':>11}{'epoch ms':>10}{'spmm ms':>9}{'allreduce ms':>13}{'nnz max/mean':>13}")
for perm, agg in [("none", 1), ("single", 1), ("double", 1), ("double-balanced", 1), ("double", 4)]:
    runs = [json.load(open(f)) for f in sorted(glob.glob(f"{out}/{perm}-agg{agg}-rep*.json"))]
    med = lambda key: statistics.median(key(r) for r in runs) * 1e3
    print(f"{perm:<16}{agg:>11}{med(lambda r: r['summary']['epoch_time_s']):>10.1f}"
          f"{med(lambda r: r['breakdown']['spmm']['time_max_s']):>9.1f}"
          f"{med(lambda r: r['breakdown']['allreduce']['time_max_s']):>13.1f}"
          f"{runs[0]['load_balance']['nnz_max_over_mean']:>13.3f}")
PY

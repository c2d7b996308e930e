#!/usr/bin/env bash
# The strategy comparison model (gcnlab plan --algo, planning/plan.hpp) on this machine:
#   1. runs every full-graph strategy on every grid it accepts at 2 and 4 ranks (calibration set)
#      and at 8 ranks (validation set), on a mid-size graph;
#   2. fits a machine profile to the calibration runs (gcnlab plan --calibrate: kernel rates,
#      bandwidth; Eq. 4.4's k from the plexus-3d runs);
#   3. predicts the 8-rank runs with it (gcnlab plan --validate: Spearman of predicted vs
#      measured epoch time over all strategies and grids);
#   4. ranks every grid of every strategy at 8 ranks from simulate's volumes (plan --algo all),
#      and, with the perlmutter profile, at 64 and 256 ranks of R-MAT 16.
# usage: experiments/plan_strategies.sh [OUT_DIR]   (default results/plan-strategies)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-results/plan-strategies}
gcnlab=${GCNLAB:-$here/build/gcnlab}
dataset=${DATASET:-sbm:nodes=20000,classes=8,avg-degree=16,features=64,seed=1}
large=${LARGE:-rmat:scale=16,edge-factor=16,features=128,classes=32,seed=1}
epochs=${EPOCHS:-6}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
       OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$out/runs"

grids() {  # the factorisations of $2 into the grid of strategy $1
  local algo=$1 p=$2 x y
  case $algo in
    1d | sa-1d | mggcn-1d) echo "$p" ;;
    1.5d | sa-1.5d | 2d) for ((x = 1; x <= p; x++)); do ((p % x)) || echo "${x}x$((p / x))"; done ;;
    *) for ((x = 1; x <= p; x++)); do ((p % x)) && continue
         for ((y = 1; y <= p / x; y++)); do (((p / x) % y)) || echo "${x}x${y}x$((p / x / y))"; done
       done ;;
  esac
}

for p in 2 4 8; do
  for algo in 1d 1.5d 2d split-3d sa-1d sa-1.5d mggcn-1d plexus-3d; do
    for g in $(grids $algo $p); do
      f="$out/runs/p${p}-${algo}-${g}.json"
      [[ -s $f || -e $f.refused ]] && continue  # resumable
      echo "$algo grid $g on $p ranks"
      if ! mpirun -np "$p" "$gcnlab" train --algo "$algo" --grid "$g" --dataset "$dataset" --epochs "$epochs" \
           --threads 1 --no-eval --out "$f" > "$out/runs/p${p}-${algo}-${g}.log" 2>&1; then
        touch "$f.refused"  # a grid the strategy does not take (its log says why)
      fi
    done
  done
done

"$gcnlab" plan --calibrate "$out"/runs/p2-*.json "$out"/runs/p4-*.json --name local --out "$out/profile.json"
"$gcnlab" plan --validate "$out"/runs/p8-*.json --machine "$out/profile.json" --out "$out/validation.json" |
  tee "$out/validation.txt"
"$gcnlab" plan --algo all --dataset "$dataset" --ranks 8 --machine "$out/profile.json" --out "$out/plan-8.json" |
  tee "$out/plan-8.txt"
for p in 64 256; do
  "$gcnlab" plan --algo all --dataset "$large" --ranks "$p" --machine perlmutter --hidden 128 \
    --out "$out/perlmutter-$p.json" | tee "$out/perlmutter-$p.txt"
done

#!/usr/bin/env bash
# Plexus performance model on this machine (Plexus Sec. 4, Fig. 5):
#   1. runs plexus-3d on every X x Y x Z factorisation of 2 and 4 ranks (calibration set)
#      and of 8 ranks (validation set) on a mid-size graph;
#   2. fits a machine profile to the calibration runs (gcnlab plan --calibrate);
#   3. predicts the 8-rank runs with it and reports the Spearman rank correlation of
#      predicted vs measured epoch time (gcnlab plan --validate), keeping the figure data.
# usage: experiments/plexus_model.sh [OUT_DIR]   (default results/plexus-model)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-results/plexus-model}
gcnlab=${GCNLAB:-$here/build/gcnlab}
dataset=${DATASET:-sbm:nodes=20000,classes=8,avg-degree=16,features=64,seed=1}
epochs=${EPOCHS:-6}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
       OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$out/runs"

factorisations() {  # all x*y*z = $1
  local p=$1 x y
  for ((x = 1; x <= p; x++)); do ((p % x)) && continue
    for ((y = 1; y <= p / x; y++)); do (((p / x) % y)) && continue; echo "${x}x${y}x$((p / x / y))"; done
  done
}

for p in 2 4 8; do
  for g in $(factorisations $p); do
    f="$out/runs/p${p}-${g}.json"
    [[ -s $f ]] && continue  # resumable
    echo "plexus-3d grid $g on $p ranks"
    mpirun -np "$p" "$gcnlab" train --algo plexus-3d --grid "$g" --dataset "$dataset" --epochs "$epochs" \
      --threads 1 --no-eval --out "$f" > "$out/runs/p${p}-${g}.log" 2>&1
  done
done

"$gcnlab" plan --calibrate "$out"/runs/p2-*.json "$out"/runs/p4-*.json --name local --out "$out/profile.json"
"$gcnlab" plan --validate "$out"/runs/p8-*.json --machine "$out/profile.json" --out "$out/validation.json" |
  tee "$out/validation.txt"
"$gcnlab" plan --dataset "$dataset" --ranks 8 --machine "$out/profile.json" | tee "$out/plan.txt"

#!/usr/bin/env bash
# The traced performance model (gcnlab plan, planning/plan.hpp) on this machine, for every model:
#   1. runs gcn, sage, gin and gat under five full-graph strategies (1d, 1.5d, 2d, sa-1d, plexus-3d)
#      on every grid each accepts at 2, 4 and 8 ranks, on a mid-size graph, REPEATS times (3), and the
#      2-rank set once more on a graph twice as large (CALIBRATION_DATASET);
#   2. fits a machine profile to the 2-rank runs of both sizes (gcnlab plan --calibrate: per kernel
#      kind a rate, a per-call latency and, for the sparse kinds, a time per nonzero and per row element,
#      by NNLS against each run's traced work; the bandwidth, and each collective's own seconds per
#      byte; Eq. 4.4's k from the plexus-3d runs of GCN), with each category's residual. Two sizes, because at one size a strategy's calls and the
#      rows they visit grow together, and a per-call latency absorbs what the rows cost;
#   3. predicts every run of the mid-size graph with it (gcnlab plan --validate: per-run error, median
#      and worst, and per model and rank count whether the measured-fastest strategy and grid, over the
#      repetitions' means, is in the top two, and which others are within the runs' spread of it;
#      4 and 8 ranks share the 2 cores: the cores bound the epoch at σ · mean (compute + comm)),
#      tabulated per model and rank count (experiments/plan_table.py: docs/planning.md's table);
#   4. ranks every grid of every strategy for gat, sage and gin at 512 ranks of R-MAT 14 with the
#      perlmutter profile (plan --algo all, each model's defaults: GAT 8 heads x 128; ~6 min each, up to
#      12 GB for split-3d's replicated grids), and tabulates each strategy's best grid
#      (experiments/plan_table.py: docs/planning.md's tables).
# usage: experiments/plan_strategies.sh [OUT_DIR]   (default results/plan-strategies; RUNS_ONLY=1: step 1 only;
#        RANKS="2 4 8", REPEATS=3, MODELS, DATASET, CALIBRATION_DATASET, EPOCHS override; ~12 min for steps 1-3)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-results/plan-strategies}
gcnlab=${GCNLAB:-$here/build/gcnlab}
dataset=${DATASET:-sbm:nodes=20000,classes=8,avg-degree=16,features=64,seed=1}
calibration_dataset=${CALIBRATION_DATASET:-sbm:nodes=40000,classes=8,avg-degree=16,features=64,seed=1}
repeats=${REPEATS:-3}
large=${LARGE:-rmat:scale=14,edge-factor=16,features=128,classes=32,seed=1}
epochs=${EPOCHS:-4}
models=${MODELS:-gcn sage gin gat}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
       OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

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

model_flags() {  # 3 layers of 64; GAT: 4 heads of 16, concatenated
  case $1 in gat) echo "--model gat --hidden 16 --heads 4" ;; *) echo "--model $1 --hidden 64" ;; esac
}

run_set() {  # run_set DIR DATASET RANKS...: every model, strategy and grid
  local dir=$1 data=$2 p model algo g f
  shift 2
  mkdir -p "$dir"
  for p in "$@"; do
    for model in $models; do
      for algo in 1d 1.5d 2d sa-1d plexus-3d; do
        for g in $(grids "$algo" "$p"); do
          f="$dir/p${p}-${model}-${algo}-${g}.json"
          [[ -s $f || -e $f.refused ]] && continue  # resumable
          echo "$model $algo grid $g on $p ranks ($dir)"
          # shellcheck disable=SC2046
          if ! mpirun -np "$p" "$gcnlab" train --algo "$algo" --grid "$g" --dataset "$data" --epochs "$epochs" \
               $(model_flags "$model") --layers 3 --threads 1 --no-eval --out "$f" > "${f%.json}.log" 2>&1; then
            touch "$f.refused"  # a grid the strategy does not take (its log says why)
          fi
        done
      done
    done
  done
}

for ((rep = 1; rep <= repeats; rep++)); do
  # shellcheck disable=SC2086
  run_set "$out/runs/r$rep" "$dataset" ${RANKS:-2 4 8}
done
run_set "$out/runs/calibration" "$calibration_dataset" 2
[[ -n ${RUNS_ONLY:-} ]] && exit 0  # step 1 only (e.g. to repeat it into another directory)

"$gcnlab" plan --calibrate "$out"/runs/{r*,calibration}/p2-*.json --name local --out "$out/profile.json" |
  tee "$out/calibration.txt"
"$gcnlab" plan --validate "$out"/runs/r*/p*.json --machine "$out/profile.json" --out "$out/validation.json" |
  tee "$out/validation.txt"
python3 "$here/experiments/plan_table.py" "$out/validation.json" | tee "$out/validation.md"
for model in gat sage gin; do
  "$gcnlab" plan --algo all --dataset "$large" --ranks 512 --machine perlmutter --model "$model" \
    --out "$out/perlmutter-512-$model.json" > "$out/perlmutter-512-$model.txt"
done
python3 "$here/experiments/plan_table.py" "$out"/perlmutter-512-{gat,sage,gin}.json | tee "$out/perlmutter-512.md"

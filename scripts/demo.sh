#!/usr/bin/env bash
# The main job: installs what is missing, builds, and compares `serial` with
# `1d` on 1, 2 and 4 ranks on the default dataset (a synthetic SBM, no files
# needed), printing each run's progress and a side-by-side table at the end.
# Results go to RESULTS_DIR (default: results/demo, outside the source files).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
gcnlab="${BUILD_DIR:-$root/build}/gcnlab"
results=${RESULTS_DIR:-$root/results/demo}
mkdir -p "$results"

# One machine, several ranks: OpenMPI needs these when ranks outnumber cores
# (without yield_when_idle, oversubscribed runs are 30-100x slower).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
       OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader
epochs=${EPOCHS:-20}
runs=("serial 1" "1d 1" "1d 2" "1d 4")
files=()
for run in "${runs[@]}"; do
  set -- $run
  echo "=== $1 on $2 rank(s) ==="
  mpirun -np "$2" "$gcnlab" train --algo "$1" --epochs "$epochs" --out "$results/$1-np$2.json"
  files+=("$results/$1-np$2.json")
done
echo
echo "=== comparison (per epoch; time and bytes: max over ranks) ==="
"$gcnlab" compare "${files[@]}"
echo
echo "results: $results"

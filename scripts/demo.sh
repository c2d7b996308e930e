#!/usr/bin/env bash
# The main job: installs what is missing, builds, runs the demo sweep (every
# strategy at 1, 2, 4 and 8 ranks on the default SBM, experiments/sweeps/demo.json)
# and turns the results into one HTML report with the comparison figures.
# Results go to RESULTS_DIR (default: results/demo, outside the source files);
# an interrupted run resumes where it stopped. It builds only the gcnlab binary
# (the tests build under scripts/test.sh) and says how long each stage took.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
stages=()
stage() {  # stage NAME COMMAND...: run it, remember how long it took
  local name=$1 t0=$SECONDS
  shift
  "$@"
  stages+=("$name $((SECONDS - t0)) s")
}
stage setup "$root/scripts/setup.sh"
stage build env BUILD_TARGETS=gcnlab "$root/scripts/build.sh"
gcnlab="${BUILD_DIR:-$root/build}/gcnlab"
results=${RESULTS_DIR:-$root/results/demo}
sweep=${SWEEP:-$root/experiments/sweeps/demo.json}

stage sweep /usr/bin/python3 "$root/experiments/sweep.py" "$sweep" --results "$results" --gcnlab "$gcnlab"
echo
stage report /usr/bin/python3 "$root/plots/report.py" "$results"
echo
echo "=== comparison at 4 ranks (per epoch; time and bytes: max over ranks) ==="
mapfile -t four < <(grep -l '"ranks": 4' "$results"/runs/*.json || true)
[ "${#four[@]}" -gt 0 ] && "$gcnlab" compare "${four[@]}"
echo
echo "report: $results/report.html (figures in $results/figures)"
echo "demo: $(IFS=,; echo "${stages[*]}" | sed 's/,/, /g'), $SECONDS s in all"

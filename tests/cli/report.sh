#!/usr/bin/env bash
# The report as a reader gets it: a small sweep of every registered strategy at
# 1, 2 and 4 ranks (as the demo runs them, on a tiny graph), the report written
# from it, then checked by tests/docs/check_report.py: valid HTML (Tidy), every
# figure loads in headless Chromium and is readable at the page's width (not
# shrunk below 0.7 of its natural size), every strategy in the summary links to
# its runs.
source "$(dirname "$0")/lib.sh"
if ! command -v chromium >/dev/null || ! command -v tidy >/dev/null; then
  echo "skipped: chromium or tidy missing (scripts/setup.sh installs them)"; exit 77
fi
"$GCNLAB" strategies --json | "$PYTHON" -c '
import json, sys
reg = json.load(sys.stdin)["strategies"]
print(json.dumps({"name": "report", "datasets": ["sbm:nodes=400,classes=4,avg-degree=6,features=12,seed=1"],
                  "algorithms": [s["name"] for s in reg], "ranks": [1, 2, 4], "grids": "default",
                  "options": {"epochs": 3, "hidden": 8, "layers": 2, "threads": 1},
                  "algorithm_options": {s["name"]: {"batch-size": 200} for s in reg
                                        if not s["capabilities"]["full_graph"]}}))' > "$WORK/report.json"
"$PYTHON" "$GCNLAB_SOURCE_DIR/experiments/sweep.py" "$WORK/report.json" --results "$WORK/res" --gcnlab "$GCNLAB" \
  --mpirun "$MPIEXEC" >"$WORK/sweep.txt" 2>&1 || { tail -20 "$WORK/sweep.txt"; fail "the sweep failed"; }
"$PYTHON" "$GCNLAB_SOURCE_DIR/plots/report.py" "$WORK/res" >/dev/null || fail "report.py failed"
"$PYTHON" "$GCNLAB_SOURCE_DIR/tests/docs/check_report.py" "$WORK/res/report.html" --min-figures 6 \
  || fail "the report does not read at a glance"
# every strategy of the summary links to its runs
for algo in $("$GCNLAB" strategies --json | "$PYTHON" -c 'import json,sys; print(" ".join(s["name"] for s in json.load(sys.stdin)["strategies"]))'); do
  a=${algo//./_}
  grep -q "href=\"#run-sbm-$a-[0-9]*\"" "$WORK/res/report.html" || fail "the summary does not link $algo to its runs"
done
finish

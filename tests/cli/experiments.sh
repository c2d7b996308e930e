#!/usr/bin/env bash
# The sweep runner and the plots (issue #7): a tiny sweep writes the expected
# files and index, a re-run skips what is done, a failing run is recorded and
# the others still run, Slurm scripts say the right ranks/nodes/GPUs; every
# plot script draws from the stored results set in tests/data/results (made
# by the real binary) and its data equals the numbers in the JSON; the report
# has every figure.
source "$(dirname "$0")/lib.sh"
SWEEP="$GCNLAB_SOURCE_DIR/experiments/sweep.py"
PLOTS="$GCNLAB_SOURCE_DIR/plots"
STORED="$GCNLAB_SOURCE_DIR/tests/data/results"

cat > "$WORK/tiny.json" <<'JSON'
{"name": "tiny", "datasets": ["sbm:nodes=300,classes=3,avg-degree=4,features=6,seed=1"],
 "algorithms": ["serial", "1d", "nope", "plexus-3d"], "ranks": [1, 2], "grids": "all",
 "options": {"epochs": 2, "hidden": 4, "layers": 2, "threads": 1}}
JSON
"$PYTHON" "$SWEEP" "$WORK/tiny.json" --results "$WORK/res" --gcnlab "$GCNLAB" --mpirun "$MPIEXEC" >"$WORK/first.txt" 2>&1 \
  || { cat "$WORK/first.txt"; fail "sweep exited non-zero"; }
grep -q "\[1/9\]" "$WORK/first.txt" && grep -q "ETA" "$WORK/first.txt" || { cat "$WORK/first.txt"; fail "no progress lines"; }
"$PYTHON" "$SWEEP" "$WORK/tiny.json" --results "$WORK/res" --gcnlab "$GCNLAB" --mpirun "$MPIEXEC" >"$WORK/second.txt" 2>&1
grep -q "9 runs, 7 already done, 2 to run" "$WORK/second.txt" || { cat "$WORK/second.txt"; fail "re-run did not skip the completed runs"; }
# --- the models axis: every strategy that runs the model (gcnlab models --json; an
# unknown one, nope, is passed on for gcnlab to report), ids of
# a sweep without it unchanged
"$PYTHON" - "$WORK/tiny.json" "$WORK/models.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["models"] = ["gcn", "scalegnn"]; json.dump(s, open(sys.argv[2], "w"))
PY
"$PYTHON" "$SWEEP" "$WORK/models.json" --gcnlab "$GCNLAB" --dry-list >"$WORK/models.txt" 2>/dev/null
"$PYTHON" "$SWEEP" "$WORK/tiny.json" --gcnlab "$GCNLAB" --dry-list >"$WORK/nomodels.txt" 2>/dev/null
[ "$(grep -c -- '--model gcn ' "$WORK/models.txt")" -eq "$(grep -c . "$WORK/nomodels.txt")" ] || fail "models: gcn runs"
[ "$(grep -- '--model scalegnn ' "$WORK/models.txt" | grep -o -- '--algo [^ ]*' | sort -u | tr '\n' ' ')" = \
  "--algo nope --algo plexus-3d --algo serial " ] || fail "models: scalegnn runs only where the registry says ($(grep -- \
  '--model scalegnn ' "$WORK/models.txt" | grep -o -- '--algo [^ ]*' | sort -u | tr '\n' ' '))"
grep -q -- "--out 1d-np2-r0-" "$WORK/nomodels.txt" && ! grep -q -- "--model" "$WORK/nomodels.txt" || fail "models: ids without the axis"
"$PYTHON" "$SWEEP" "$WORK/tiny.json" --slurm "$WORK/slurm" --gpus-per-node 1 --gcnlab /opt/gcnlab \
  --results "$WORK/res" >/dev/null || fail "slurm generation"
for f in "$WORK"/slurm/*.sbatch "$WORK/slurm/submit.sh"; do bash -n "$f" || fail "bash -n $f"; done

# --- a Slurm array task end to end, with a fake srun that runs mpirun on this machine
"$PYTHON" "$SWEEP" "$WORK/tiny.json" --slurm "$WORK/slurm-cpu" --backend cpu --gcnlab "$GCNLAB" >/dev/null \
  || fail "slurm generation (cpu)"
mkdir -p "$WORK/bin"
cat > "$WORK/bin/srun" <<SH
#!/bin/bash
n=1
while [[ \$# -gt 0 && \$1 == --* ]]; do case \$1 in --ntasks=*) n=\${1#--ntasks=} ;; esac; shift; done
exec "$MPIEXEC" -np "\$n" "\$@"
SH
chmod +x "$WORK/bin/srun"
( export PATH="$WORK/bin:$PATH" RESULTS="$WORK/cluster" SLURM_SUBMIT_DIR="$WORK/slurm-cpu"
  bash "$WORK/slurm-cpu/tiny-prepare.sbatch" >"$WORK/prep.out" 2>&1 || { cat "$WORK/prep.out"; exit 1; }
  SLURM_ARRAY_TASK_ID=0 bash "$WORK/slurm-cpu/tiny-np1.sbatch" || exit 1                  # serial: ok
  SLURM_ARRAY_TASK_ID=2 bash "$WORK/slurm-cpu/tiny-np1.sbatch" && exit 1                  # nope: fails
  SLURM_ARRAY_TASK_ID=4 bash "$WORK/slurm-cpu/tiny-np2.sbatch" || exit 1                  # plexus-3d 2x1x1
  exit 0 ) || fail "array tasks with the fake srun"
"$PYTHON" "$SWEEP" "$WORK/tiny.json" --collect --results "$WORK/cluster" --strict >"$WORK/collect.txt" 2>&1 \
  && fail "--collect --strict exited 0 with a failed run"
grep -q "collected 3 of 9 run(s)" "$WORK/collect.txt" || { cat "$WORK/collect.txt"; fail "--collect summary"; }
"$PYTHON" "$SWEEP" "$WORK/tiny.json" --collect --results "$WORK/cluster" >/dev/null || fail "--collect without --strict"
"$PYTHON" "$PLOTS/report.py" "$WORK/cluster" --out "$WORK/cluster/report.html" >/dev/null || fail "report on a collected folder"
cat > "$WORK/big.json" <<'JSON'
{"name": "big", "datasets": ["rmat:scale=20"], "algorithms": ["1d", "plexus-3d"], "ranks": [8, 16],
 "options": {"epochs": 10}}
JSON
"$PYTHON" "$SWEEP" "$WORK/big.json" --slurm "$WORK/slurm" --gpus-per-node 4 --gcnlab /opt/gcnlab --account m1234 >/dev/null \
  || fail "slurm generation (8, 16 ranks)"

"$PYTHON" - "$WORK" <<'PY' || fail "sweep checks"
import json, pathlib, re, sys
work = pathlib.Path(sys.argv[1])
res = work / "res"
lines = [json.loads(l) for l in (res / "index.jsonl").read_text().splitlines()]
first = lines[:9]
ok = [e for e in first if e["status"] == "ok"]
bad = [e for e in first if e["status"] == "failed"]
# serial@1; 1d@1,2; plexus-3d: 1 grid at 1 rank, 3 at 2 ranks; nope@1,2 fails
assert len(ok) == 7 and len(bad) == 2, (len(ok), len(bad))
assert all(e["algo"] == "nope" and "unknown --algo 'nope'" in e["error"] for e in bad), bad
assert sorted(e["grid"] for e in ok if e["algo"] == "plexus-3d" and e["ranks"] == 2) == ["1x1x2", "1x2x1", "2x1x1"]
for e in ok:
    r = json.loads((res / e["file"]).read_text())
    assert r["config"]["algo"] == e["algo"] and r["config"]["ranks"] == e["ranks"], e
    assert len(r["epochs"]) == 2
    assert r["provenance"]["binding"]["warning"] == "", r["provenance"]["binding"]  # each rank on its own cores
# the re-run appended only the two failures again
assert len(lines) == 11 and all(e["status"] == "failed" for e in lines[9:]), lines[9:]
# Slurm: one job array per rank count (one task per run); nodes = ceil(P / GPUs per node); one rank per GPU
s1 = (work / "slurm" / "tiny-np2.sbatch").read_text()
assert "#SBATCH --nodes=2" in s1 and "#SBATCH --ntasks=2" in s1 and "#SBATCH --gpus-per-node=1" in s1, s1
assert s1.count("#SBATCH --array=") == 1 and "#SBATCH --array=0-4" in s1, s1  # 1d, nope, plexus x3
assert "#SBATCH --cpus-per-task=8" in s1 and "srun --ntasks=2 --cpus-per-task=8 --gpus-per-task=1" in s1
assert "--time=00:05:00  # per run: 3 x the slowest of" in s1, s1  # estimated from the local runs in res/
table = (work / "slurm" / "tiny-np2.runs.tsv").read_text().splitlines()
assert len(table) == 5 and all("--backend cuda" in l and 'gcl:$RESULTS/data/d0.gcl' in l for l in table)
assert any("--grid 2x1x1" in l for l in table)
assert "prepare --dataset sbm:nodes=300" in (work / "slurm" / "tiny-prepare.sbatch").read_text()
submit = (work / "slurm" / "submit.sh").read_text()
assert submit.count("sbatch --dependency=afterok:$prep") == 2, submit
s16 = (work / "slurm" / "big-np16.sbatch").read_text()
assert "#SBATCH --nodes=4" in s16 and "#SBATCH --ntasks-per-node=4" in s16 and "#SBATCH --gpus-per-node=4" in s16
assert "#SBATCH --account=m1234" in s16 and s16.startswith("#!/bin/bash")
assert "#SBATCH --array=0-1" in s16 and "--time=00:30:00  # per run: default" in s16
# the collected cluster folder: serial ok, nope failed with its message, plexus-3d ok
cl = work / "cluster"
idx = [json.loads(l) for l in (cl / "index.jsonl").read_text().splitlines()]
assert len(idx) == 3, idx  # the second --collect added nothing
by = {(e["algo"], e["ranks"]): e for e in idx}
assert by[("serial", 1)]["status"] == "ok" and by[("plexus-3d", 2)]["status"] == "ok", by
assert by[("nope", 1)]["status"] == "failed" and "unknown --algo 'nope'" in by[("nope", 1)]["error"], by
r = json.loads((cl / by[("serial", 1)]["file"]).read_text())
assert r["dataset"]["spec"].startswith("gcl:") and r["dataset"]["name"] == "sbm" and len(r["epochs"]) == 2
assert (cl / "data" / "d0.gcl").stat().st_size > 0 and (cl / "logs").is_dir()
print("sweep checks passed")
PY

# --- plots on the stored results set
for s in breakdown scaling volume loss balance predicted memory; do
  "$PYTHON" "$PLOTS/$s.py" "$STORED" --out "$WORK/fig" --data-out "$WORK/$s.json" >/dev/null 2>"$WORK/$s.err" \
    || { cat "$WORK/$s.err"; fail "plots/$s.py"; }
done
"$PYTHON" "$PLOTS/report.py" "$STORED" --out "$WORK/report/report.html" >/dev/null || fail "plots/report.py"
# pandas-ready: the report's runs.csv and `gcnlab compare --csv` hold the same rows and columns
"$GCNLAB" compare "$STORED"/runs/*.json --csv "$WORK/compare.csv" >/dev/null 2>&1 || fail "gcnlab compare --csv"
"$PYTHON" - "$WORK" "$STORED" "$PLOTS" <<'PY' || fail "runs.csv checks"
import json, pathlib, sys
import numpy as np, pandas as pd
work, stored = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
sys.path.insert(0, sys.argv[3])
import common
py = pd.read_csv(work / "report" / "runs.csv").sort_values("file").reset_index(drop=True)
cpp = pd.read_csv(work / "compare.csv").sort_values("file").reset_index(drop=True)
files = sorted(str(p) for p in (stored / "runs").glob("*.json"))
assert list(py["file"]) == files and list(cpp["file"]) == files, (list(py["file"])[:3], list(cpp["file"])[:3])
assert list(py.columns) == list(cpp.columns), set(py.columns) ^ set(cpp.columns)
for col in py.columns:
    a, b = py[col], cpp[col]
    if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
        assert np.allclose(a, b, rtol=1e-12, equal_nan=True), col
    else:
        assert (a.fillna("").astype(str) == b.fillna("").astype(str)).all(), (col, a[:3], b[:3])
run = json.loads(pathlib.Path(files[0]).read_text())
assert np.isclose(py.loc[0, "spmm.time_max_s"], run["breakdown"]["spmm"]["time_max_s"], rtol=1e-12)
assert np.isclose(py.loc[0, "epoch_time_s"], run["summary"]["epoch_time_s"], rtol=1e-12)
assert py.loc[0, "algo"] == run["config"]["algo"] and py.loc[0, "grid"] == "x".join(map(str, run["config"]["grid"]))
assert len(common.dataframe(common.load_runs(stored))) == len(files)
print("runs.csv checks passed")
PY
"$PYTHON" - "$WORK" "$STORED" <<'PY' || fail "plot data checks"
import json, pathlib, statistics, sys
work, stored = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
runs = {str(p): json.loads(p.read_text()) for p in (stored / "runs").glob("*.json")}
load = lambda n: json.loads((work / f"{n}.json").read_text())
for name in ["breakdown-sbm", "scaling-sbm", "volume-sbm", "loss-sbm", "balance-sbm", "memory-sbm", "predicted-0"]:
    for ext in ("png", "svg"):
        f = work / "fig" / f"{name}.{ext}"
        assert f.exists() and f.stat().st_size > 1000, f
def run_of(file):
    return runs[str(pathlib.Path(file))]
# stacked bars: the segments sum to the bar, which is that rank's epoch time in the JSON
for bar in load("breakdown")[0]["bars"]:
    r = run_of(bar["file"])
    pr = next(p for p in r["per_rank"] if p["rank"] == bar["rank"])
    assert abs(sum(bar["segments_s"].values()) - bar["total_s"]) < 1e-12
    assert abs(bar["total_s"] - sum(pr["time_s"].values())) < 1e-12
    assert abs(bar["total_s"] - max(sum(p["time_s"].values()) for p in r["per_rank"])) < 1e-12  # the slowest rank
    assert abs(bar["hidden_s"] - sum(pr.get("hidden_time_s", {}).values())) < 1e-12  # drawn above, outside the epoch
# overlapped broadcasts: mggcn-1d on 2 and 4 ranks hid some communication, the blocking strategies none
hidden = {(b["algo"], b["ranks"]): b["hidden_s"] for b in load("breakdown")[0]["bars"]}
assert all(hidden[("mggcn-1d", p)] > 0 for p in (2, 4)), hidden
assert all(v == 0 for (a, p), v in hidden.items() if a != "mggcn-1d"), hidden
# scaling: the plotted epoch times are the summaries' (one run per point here)
by_point = {(r["config"]["algo"], r["config"]["ranks"]): r for r in runs.values()}
for algo, pts in load("scaling")[0]["lines"].items():
    for p in pts:
        assert p["epoch_time_s"] == by_point[(algo, p["ranks"])]["summary"]["epoch_time_s"]
        assert p["min_s"] <= p["epoch_time_s"] <= p["max_s"], p  # the spread over repetitions
# volume: measured equals model, both the busiest rank's sum over communication categories
for algo, pts in load("volume")[0]["series"].items():
    for p in pts:
        r = by_point[(algo, p["ranks"])]
        assert abs(p["measured_bytes"] - p["model_bytes"]) <= 1e-6 * max(1, p["model_bytes"]), (algo, p)
        busiest = max(sum(v for k, v in q["wire_bytes"].items() if k != "other") for q in r["per_rank"])
        assert abs(p["measured_bytes"] - busiest) <= 1e-9 * max(1, busiest), (algo, p, busiest)
    if algo != "serial":
        assert any(p["measured_bytes"] > 0 for p in pts), algo
# loss curves: the JSON's per-epoch losses; the parallel runs are on top of serial
curves = load("loss")[0]["curves"]
for algo, c in curves.items():
    assert c["loss"] == [e["loss"] for e in run_of(c["file"])["epochs"]]
    if algo != "serial":  # the plotted difference from serial, per epoch
        assert len(c["rel_diff_from_serial"]) == len(c["loss"])
        assert all(abs(d - abs(a - b) / b) < 1e-15 for d, a, b in zip(c["rel_diff_from_serial"], c["loss"], curves["serial"]["loss"]))
    assert all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(c["loss"], curves["serial"]["loss"])), algo
# load balance: the JSON's max/mean
panels = load("balance")[0]["panels"]
for algo, p in panels.items():
    assert abs(p["max_over_mean"] - run_of(p["file"])["load_balance"]["nnz_max_over_mean"]) < 1e-12, algo
# one colour scale for all panels, at least 0.9 .. 1.1 around the mean
assert len({(p["vmin"], p["vmax"]) for p in panels.values()}) == 1
assert all(p["vmin"] <= 0.9 and p["vmax"] >= max(1.1, p["max_over_mean"]) for p in panels.values())
# memory
for b in load("memory")[0]["bars"]:
    assert b["peak_bytes_max"] == by_point[(b["algo"], b["ranks"])]["memory"]["peak_bytes_max"]
# predicted vs measured
v = json.loads((stored / "validation.json").read_text())
pred = load("predicted")[0]
assert pred["spearman"] == v["spearman"] and len(pred["measured_ms"]) == len(v["points"])
html = (work / "report" / "report.html").read_text()
for name in ["breakdown-sbm.png", "scaling-sbm.png", "volume-sbm.png", "loss-sbm.png", "balance-sbm.png",
             "memory-sbm.png", "predicted-0.png", "Summary", "speedup vs serial"]:
    assert name in html, name
print("plot checks passed")
PY

# --- the papers' tables by simulation (quick): the tables, figures and raw JSON
GCNLAB="$GCNLAB" "$PYTHON" "$GCNLAB_SOURCE_DIR/experiments/paper_tables.py" "$WORK/tables" --quick >"$WORK/tables.txt" 2>&1 \
  || { cat "$WORK/tables.txt"; fail "experiments/paper_tables.py"; }
for f in summary.md cagnet_volume.png sa_table2.png plexus_table3.png 2d-p64.json plexus_table3.json; do
  [[ -s "$WORK/tables/$f" ]] || fail "paper_tables.py did not write $f"
done
"$PYTHON" - "$WORK/tables" <<'PY'
import json, sys
from pathlib import Path
t = Path(sys.argv[1])
j = json.loads((t / "2d-p64.json").read_text())
assert j["schema"] == "gcnlab.simulate/1" and j["config"]["grid"] == [8, 8] and len(j["ranks"]) == 64, j["config"]
# the 1d volume does not shrink with P; 2d's does (CAGNET Sec. IV)
v = {p: json.loads((t / f"{a}-p{p}.json").read_text())["summary"]["wire_bytes_max_rank"] for a in ["1d"] for p in [4, 64]}
w = {p: json.loads((t / f"2d-p{p}.json").read_text())["summary"]["wire_bytes_max_rank"] for p in [4, 64]}
assert v[64] > v[4] and w[64] < w[4] / 1.5, (v, w)
t3 = json.loads((t / "plexus_table3.json").read_text())
assert t3["8"]["original"] > t3["8"]["single"] > t3["8"]["double"] > t3["8"]["double-balanced"], t3
PY
[[ $? -eq 0 ]] || fail "paper_tables.py numbers"

# --- time to accuracy, scalegnn-4d vs plexus-3d (quick): every configuration ran and is in the table
GCNLAB="$GCNLAB" MPIRUN="$MPIEXEC" bash "$GCNLAB_SOURCE_DIR/experiments/scalegnn_tta.sh" --quick --out "$WORK/tta" \
  >"$WORK/tta.txt" 2>&1 || { cat "$WORK/tta.txt"; fail "experiments/scalegnn_tta.sh"; }
"$PYTHON" - "$WORK/tta" <<'PY'
import glob, json, sys
out = sys.argv[1]
runs = {f.split("/")[-1]: json.load(open(f)) for f in glob.glob(f"{out}/runs/*.json")}
assert len(runs) == 12, sorted(runs)  # gcn: 7; scalegnn's model: plexus-3d and 4 scalegnn-4d, no bf16 twins
for name, j in runs.items():  # bf16 twins: the same run with half the partial sums' bytes
    if name.endswith("-bf16-s1.json"):
        twin = runs[name.replace("-bf16", "")]
        assert j["config"]["comm_precision"] == "bf16" and twin["config"]["comm_precision"] == "fp32", name
        wire = lambda r: r["breakdown"]["allreduce"]["wire_bytes_max"]
        assert 0 < wire(j) < wire(twin), (name, wire(j), wire(twin))
for name, j in runs.items():
    mb = j["config"]["minibatch"]
    if j["config"]["algo"] == "plexus-3d":
        assert mb is None, name
        continue
    d, b = j["config"]["grid"][0], mb["batch_size"]
    assert mb["dp_groups"] == d and mb["steps_per_epoch"] == -(-2000 // (b * d)), (name, mb)
    t = j["summary"]["target"]
    assert t is None or (t["val_acc"] >= 0.35 and t["epochs"] > 0), (name, t)
table = open(f"{out}/summary.md").read()
assert table.count("| sbm |") == 12 and table.count("| bf16 |") == 2, table
assert table.count("| sbm | scalegnn |") == 5, table
PY
[[ $? -eq 0 ]] || fail "scalegnn_tta.sh results"
# --- plan_table.py: each strategy's best grid of a plan, its halves adding up to the epoch
"$GCNLAB" plan --algo 1d,2d,plexus-3d --model sage --hidden 8 --ranks 4 --machine perlmutter \
  --dataset sbm:nodes=400,classes=4,avg-degree=6,features=8,seed=1 --out "$WORK/plan4.json" >/dev/null 2>&1 \
  || fail "gcnlab plan --algo for plan_table.py"
"$PYTHON" "$GCNLAB_SOURCE_DIR/experiments/plan_table.py" "$WORK/plan4.json" >"$WORK/plan4.md" || fail "plan_table.py"
"$PYTHON" - "$WORK/plan4.json" "$WORK/plan4.md" <<'PY' || fail "plan_table.py's table"
import json, sys
plan, md = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
rows = [l for l in md.splitlines() if l.startswith("| `")]
assert len(rows) == 3, md
epochs = []
for r in rows:
    algo, grid, epoch, compute, comm = [c.strip(" `") for c in r.split("|")[1:6]]
    best = min((s for s in plan["strategies"] if s["algo"] == algo), key=lambda s: s["predicted_s"])
    assert grid == "x".join(map(str, best["grid"])), (r, best)
    epoch, compute, comm = float(epoch), float(compute), float(comm)
    assert abs(epoch - 1e3 * best["predicted_s"]) <= 1e-3 * epoch and abs(compute + comm - epoch) <= 2e-3 * epoch, r
    epochs.append(epoch)
assert epochs == sorted(epochs), md
assert f"{len(plan['strategies'])} grids ranked" in md, md
PY
finish

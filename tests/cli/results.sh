#!/usr/bin/env bash
# Real output of the binary: the results JSON validates against the schema,
# its numbers are consistent, weights leave and re-enter as .npy, a run from
# a gcl file equals the run from the source spec, `info` and `compare` work.
source "$(dirname "$0")/lib.sh"
SCHEMA="$GCNLAB_SOURCE_DIR/common/results/run.schema.json"
DS="sbm:nodes=700,classes=4,avg-degree=6,features=9,seed=2"
COMMON=(--dataset "$DS" --epochs 4 --layers 2 --hidden 8 --dropout 0.3 --seed 5)

"$MPIEXEC" -np 1 "$GCNLAB" train --algo serial "${COMMON[@]}" --out "$WORK/serial.json" --weights-out "$WORK/w" 2>"$WORK/log" \
  || { cat "$WORK/log"; fail "serial run"; }
grep -q "^epoch    3" "$WORK/log" || fail "no per-epoch progress line"
grep -q "bcast_dense\|spmm" "$WORK/log" || fail "no breakdown table"
"$MPIEXEC" -np 3 "$GCNLAB" train --algo 1d "${COMMON[@]}" --out "$WORK/1d.json" 2>"$WORK/log3" \
  || { cat "$WORK/log3"; fail "1d run"; }
"$MPIEXEC" -np 1 "$GCNLAB" train --algo serial "${COMMON[@]}" --weights-in "$WORK/w/initial" --out "$WORK/again.json" 2>/dev/null \
  || fail "run from --weights-in"
"$GCNLAB" prepare --dataset "$DS" --out "$WORK/d.gcl" 2>/dev/null || fail "prepare"
"$MPIEXEC" -np 2 "$GCNLAB" train --algo 1d --dataset "gcl:$WORK/d.gcl" "${COMMON[@]:2}" --out "$WORK/gcl.json" 2>/dev/null \
  || fail "run from gcl"
"$MPIEXEC" -np 2 "$GCNLAB" train --algo plexus-3d --grid auto "${COMMON[@]}" --agg-blocks 2 --out "$WORK/plexus.json" \
  2>"$WORK/logp" || { cat "$WORK/logp"; fail "plexus-3d --grid auto run"; }
"$MPIEXEC" -np 3 "$GCNLAB" train --algo mggcn-1d "${COMMON[@]}" --out "$WORK/mggcn.json" 2>"$WORK/logm" \
  || { cat "$WORK/logm"; fail "mggcn-1d run"; }
grep -q "hidden max ms" "$WORK/logm" || fail "no hidden column in the breakdown table"
"$MPIEXEC" -np 2 "$GCNLAB" train --algo 2d --grid 1x2 --model gat --heads 2 "${COMMON[@]}" --out "$WORK/gat.json" \
  2>"$WORK/logg" || { cat "$WORK/logg"; fail "2d --model gat run"; }
"$GCNLAB" plan --dataset "$DS" --ranks 8 --layers 2 --hidden 8 --out "$WORK/plan.json" >"$WORK/plan.txt" \
  || fail "plan"
grep -q "^  10 " "$WORK/plan.txt" || { cat "$WORK/plan.txt"; fail "plan does not list the 10 grids of 8 ranks"; }
# a model Plexus's model does not describe: plexus-3d's grids priced by the traced epoch
"$GCNLAB" plan --model sage --dataset "$DS" --ranks 4 --layers 2 --hidden 8 >"$WORK/plan-sage.txt" 2>&1 \
  || { cat "$WORK/plan-sage.txt"; fail "plan --model sage"; }
grep -q "priced by its traced epoch on plexus-3d's grids" "$WORK/plan-sage.txt" || fail "plan --model sage: the note"
grep -q "^   6 plexus-3d" "$WORK/plan-sage.txt" || { cat "$WORK/plan-sage.txt"; fail "plan --model sage: 6 grids"; }
"$GCNLAB" plan --algo 1d,2d,plexus-3d --dataset "$DS" --ranks 4 --layers 2 --hidden 8 --out "$WORK/plan-algo.json" \
  >"$WORK/plan-algo.txt" || { cat "$WORK/plan-algo.txt"; fail "plan --algo"; }
"$GCNLAB" plan --validate "$WORK/plexus.json" "$WORK/1d.json" "$WORK/gat.json" --out "$WORK/validation.json" >"$WORK/validate.txt" \
  || { cat "$WORK/validate.txt"; fail "plan --validate"; }
"$GCNLAB" info --dataset "$DS" --shards 4x4 | grep -q "original .* single .* double" || fail "info --shards"
# a prepared directory (METIS into 3 parts): 1d on 3 ranks reads it; info prints the same facts as the source
"$GCNLAB" prepare --dataset "$DS" --shards 4x4 --partitioner metis --parts 3 --out "$WORK/prep" 2>/dev/null \
  || fail "prepare --shards"
"$MPIEXEC" -np 3 "$GCNLAB" train --algo 1d --dataset "gcl:$WORK/prep" "${COMMON[@]:2}" --out "$WORK/prep.json" 2>/dev/null \
  || fail "run from a prepared directory"
"$GCNLAB" info --dataset "$DS" | grep -v "^dataset" >"$WORK/info-src"
"$GCNLAB" info --dataset "gcl:$WORK/prep" | grep -v "^dataset\|^prepared" >"$WORK/info-prep"
diff "$WORK/info-src" "$WORK/info-prep" || fail "info on a prepared directory differs from the source"
"$GCNLAB" info --dataset "gcl:$WORK/prep" | grep -q "partitioner metis (3 parts)" || fail "info: prepared layout"

"$PYTHON" - "$SCHEMA" "$WORK" <<'PY' || fail "results checks"
import json, sys
import jsonschema, numpy as np
schema = json.load(open(sys.argv[1])); work = sys.argv[2]
runs = {k: json.load(open(f"{work}/{k}.json")) for k in ["serial", "1d", "again", "gcl", "plexus", "prep", "mggcn", "gat"]}
# the edge tensors' nonzeros: a rank's nonzeros, but on a 1x2 grid every rank keeps the whole graph's (A + I)
for name, r in runs.items():
    whole = sum(p["nnz_local"] for p in r["per_rank"])
    for p in r["per_rank"]:
        assert p["edges_local"] == (whole if name == "gat" else p["nnz_local"]), (name, p["edges_local"], whole)
for name, r in runs.items():
    jsonschema.validate(r, schema)
    assert len(r["epochs"]) == 4 and r["config"]["ranks"] == len(r["per_rank"]), name
    # breakdown numbers are the per-rank numbers' max and sum
    for cat, b in r["breakdown"].items():
        times = [p["time_s"][cat] for p in r["per_rank"]]
        assert abs(b["time_max_s"] - max(times)) < 1e-12, (name, cat)
        if cat in r["per_rank"][0]["wire_bytes"]:
            wires = [p["wire_bytes"][cat] for p in r["per_rank"]]
            assert abs(b["wire_bytes_total"] - sum(wires)) < 1e-6, (name, cat)
            # measured equals the strategy's model on every rank
            for p in r["per_rank"]:
                assert abs(p["wire_bytes"][cat] - p["model_wire_bytes"][cat]) <= 1e-9 * max(1, p["model_wire_bytes"][cat]), (name, cat, p)
    # the epoch time is split over the categories (other = the rest)
    for p in r["per_rank"]:
        assert sum(p["time_s"].values()) > 0
    s = r["summary"]; timed = [e["time_s"] for e in r["epochs"][1:]]
    kept = [t for t in timed if t <= 2 * s["epoch_time_median_s"]]  # slow_epochs left out
    assert abs(s["epoch_time_s"] - sum(kept) / len(kept)) < 1e-12
    assert len(s["slow_epochs"]) == len(timed) - len(kept)
    assert s["final_loss"] == r["epochs"][-1]["loss"]
loss = lambda r: np.array([e["loss"] for e in r["epochs"]])
assert np.allclose(loss(runs["serial"]), loss(runs["1d"]), rtol=1e-4), "1d differs from serial"
assert np.array_equal(loss(runs["serial"]), loss(runs["again"])), "--weights-in run differs"
assert np.allclose(loss(runs["1d"]), loss(runs["gcl"]), rtol=1e-4), "gcl run differs"
assert np.allclose(loss(runs["serial"]), loss(runs["prep"]), rtol=1e-4), "run from a prepared directory differs"
assert runs["prep"]["config"]["partitioner"] == "metis" and runs["prep"]["config"]["partition"]["parts"] == 3
assert np.allclose(loss(runs["serial"]), loss(runs["plexus"]), rtol=1e-4), "plexus-3d differs from serial"
c = runs["plexus"]["config"]
assert np.prod(c["grid"]) == 2 and len(c["grid"]) == 3 and c["permutation"] == "double" and c["agg_blocks"] == 2, c
plan = json.load(open(f"{work}/plan.json"))
assert len(plan["grids"]) == 10 and all(np.prod(g["grid"]) == 8 for g in plan["grids"])
assert [g["predicted_s"] for g in plan["grids"]] == sorted(g["predicted_s"] for g in plan["grids"])
# plan --algo: every grid of the three strategies at 4 ranks (1 + 3 + 6), fastest first
pa = json.load(open(f"{work}/plan-algo.json"))
assert pa["schema"] == "gcnlab.plan-strategies/1" and len(pa["strategies"]) + len(pa["refused"]) == 10, pa["refused"]
assert [q["predicted_s"] for q in pa["strategies"]] == sorted(q["predicted_s"] for q in pa["strategies"])
assert {q["algo"] for q in pa["strategies"]} == {"1d", "2d", "plexus-3d"}
v = json.load(open(f"{work}/validation.json"))
assert v["schema"] == "gcnlab.plan-validation/2" and v["median_abs_error"] >= 0
assert len(v["points"]) == 3 and all(p["predicted_s"] > 0 and p["predicted_compute_s"] > 0 for p in v["points"])
assert "plexus" in v["points"][0] and "plexus" not in v["points"][2]  # Plexus's model: GCN's plexus-3d run only
# every rank's kernels' work, per category and kind (what --validate priced)
for r in runs.values():
    for p in r["per_rank"]:
        assert any(w["amount"] > 0 for w in p["work"]["spmm"].values()), p["work"]  # spmm (GAT: spmm_edges)
        assert p["work"]["gemm"]["gemm"]["calls"] > 0 and "to_host" not in json.dumps(p["work"]), p["work"]
# every run records its modelled bytes by link; one node: all intra, their sum the model's
for r in runs.values():
    for p in r["per_rank"]:
        assert p["model_link_bytes"]["inter_weighted"] == 0
        assert abs(p["model_link_bytes"]["intra"] - sum(p["model_wire_bytes"].values())) <= 1e-6 * max(1, p["model_link_bytes"]["intra"])
        # ... and per collective (plan prices each at its own cost per byte)
        assert p["model_link_bytes"]["intra_by_category"] == p["model_wire_bytes"], p["model_link_bytes"]
        assert not any(p["model_link_bytes"]["inter_weighted_by_category"].values())
assert runs["1d"]["breakdown"]["bcast_dense"]["wire_bytes_max"] > 0
# mggcn-1d: 1d's model with the shared buffers, overlap and MG-GCN's random permutation recorded
mg = runs["mggcn"]["config"]
assert (mg["overlap"], mg["activations"], mg["partitioner"]) == (True, "shared", "random"), mg
assert runs["1d"]["config"]["activations"] == "per-layer" and runs["1d"]["config"]["overlap"] is None
assert np.allclose(loss(runs["serial"]), loss(runs["mggcn"]), rtol=1e-4), "mggcn-1d differs from serial"
assert runs["mggcn"]["breakdown"]["bcast_dense"]["hidden_time_max_s"] > 0
# the shared plan's activations (its BC2 for the overlap is a buffer more: at 2 layers its total may pass 1d's)
act = lambda r: max(p["memory_need"]["activations"] for p in r["per_rank"])
assert act(runs["mggcn"]) < act(runs["1d"]), (act(runs["mggcn"]), act(runs["1d"]))
assert runs["serial"]["breakdown"]["bcast_dense"]["wire_bytes_max"] == 0
def npy(p):
    return np.load(p)
for l, (fin, fout) in enumerate([(9, 8), (8, 4)]):
    w0, w1 = npy(f"{work}/w/initial/W{l}.npy"), npy(f"{work}/w/final/W{l}.npy")
    assert w0.shape == (fin, fout) and w0.dtype == np.float32
    assert not np.array_equal(w0, w1), "weights were not trained"
    a = np.sqrt(6 / (fin + fout)); assert np.abs(w0).max() <= a
print("results checks passed")
PY
# plan_table.py on the validation: one row per model and rank count, its errors the points'
"$PYTHON" "$GCNLAB_SOURCE_DIR/experiments/plan_table.py" "$WORK/validation.json" >"$WORK/validation.md" \
  || fail "plan_table.py on a validation"
"$PYTHON" - "$WORK/validation.json" "$WORK/validation.md" <<'PY' || fail "plan_table.py's validation table"
import json, sys
from math import prod
v, md = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
rows = [[c.strip() for c in l.split("|")[1:-1]] for l in md.splitlines() if l.startswith("| g")]
assert [(r[0], r[1], r[2]) for r in rows] == [("gat", "2", "1"), ("gcn", "2", "1"), ("gcn", "3", "1")], md
for r in rows:
    (p,) = [p for p in v["points"] if p["model"] == r[0] and prod(p["grid"]) == int(r[1])]
    assert r[3] == f"{100 * abs(p['error']):.1f}%" and r[5] == f"{100 * p['error']:+.1f}%", (r, p)
    assert r[6] == "-" and not v["ranking"], r  # one configuration per model and rank count: nothing to rank
PY

# threads: OMP_NUM_THREADS, then SLURM_CPUS_PER_TASK (issue 17), recorded with their source
OMP_NUM_THREADS=1 "$MPIEXEC" -np 1 "$GCNLAB" train --algo serial "${COMMON[@]}" --out "$WORK/omp.json" 2>/dev/null \
  || fail "run with OMP_NUM_THREADS=1"
env -u OMP_NUM_THREADS SLURM_CPUS_PER_TASK=3 SLURM_JOB_ID=4242 "$MPIEXEC" -np 1 "$GCNLAB" train --algo serial \
  "${COMMON[@]}" --out "$WORK/slurm.json" 2>/dev/null || fail "run with SLURM_CPUS_PER_TASK=3"
OMP_NUM_THREADS=two "$MPIEXEC" -np 1 "$GCNLAB" train --algo serial "${COMMON[@]}" 2>"$WORK/bad-omp" \
  && fail "OMP_NUM_THREADS=two accepted"
grep -q "OMP_NUM_THREADS='two' is not a positive thread count" "$WORK/bad-omp" || { cat "$WORK/bad-omp"; fail "bad OMP_NUM_THREADS message"; }
"$PYTHON" - "$SCHEMA" "$WORK" <<'PY' || fail "threads and provenance"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1])); work = sys.argv[2]
omp, slurm, one_d = (json.load(open(f"{work}/{k}.json")) for k in ["omp", "slurm", "1d"])
for r in (omp, slurm, one_d):
    jsonschema.validate(r, schema)
    p = r["provenance"]
    assert "train --algo" in p["command_line"] and p["versions"]["mpi"] and "OpenBLAS" in p["versions"]["blas"], p
    assert p["oversubscribed"] == (p["ranks_per_node"] * r["config"]["threads"] > p["cores_per_node"]), p
assert omp["config"]["threads"] == 1 and omp["provenance"]["threads_source"] == "OMP_NUM_THREADS=1", omp["provenance"]
assert slurm["config"]["threads"] == 3 and slurm["provenance"]["threads_source"] == "SLURM_CPUS_PER_TASK=3"
assert slurm["provenance"]["slurm_job_id"] == "4242" and omp["provenance"]["slurm_job_id"] is None
assert one_d["provenance"]["ranks_per_node"] == 3 and "--out" in one_d["provenance"]["command_line"]
print("threads and provenance checks passed")
PY

# --quiet on several ranks (read on every rank); --dry-run of a mini-batch run: the first epoch's steps,
# each on its own sample, equal to what that epoch then moves, rank by rank
MB=(train --algo scalegnn-4d --grid 2x1x2x1 --batch-size 300 --epochs 1 --dataset "$DS" --hidden 8 --quiet)
"$MPIEXEC" -np 4 "$GCNLAB" "${MB[@]}" --dry-run >"$WORK/dry.txt" 2>"$WORK/dry.err" || { cat "$WORK/dry.err"; fail "scalegnn-4d --dry-run --quiet"; }
"$MPIEXEC" -np 4 "$GCNLAB" "${MB[@]}" --out "$WORK/mb.json" >/dev/null 2>&1 || fail "scalegnn-4d run"
"$PYTHON" - "$WORK" <<'PY' || fail "dry-run model of a mini-batch epoch"
import json, re, sys
work = sys.argv[1]
text = open(f"{work}/dry.txt").read()
assert "the first epoch: 2 mini-batch steps, each on its own sample" in text, text
rows = {int(m.group(1)): float(m.group(2)) for m in re.finditer(r"^(\d+)\s+\(.*\)\s+\d+.*?\s(\d+)$", text, re.M)}
run = json.load(open(f"{work}/mb.json"))
measured = {p["rank"]: sum(p["wire_bytes"].values()) for p in run["per_rank"]}
assert len(rows) == 4 and rows == measured, (rows, measured)
PY

# train --config RUN.json: the recorded run again, options given here override; the recorded --out is not reused
cp "$WORK/serial.json" "$WORK/serial-before.json"
"$MPIEXEC" -np 1 "$GCNLAB" train --config "$WORK/serial.json" --epochs 2 --out "$WORK/rerun.json" 2>"$WORK/rerun.err" \
  || { cat "$WORK/rerun.err"; fail "train --config"; }
cmp -s "$WORK/serial.json" "$WORK/serial-before.json" || fail "train --config overwrote the recorded run's results"
"$PYTHON" - "$WORK" <<'PY' || fail "train --config results"
import json, sys
work = sys.argv[1]
a, b = (json.load(open(f"{work}/{k}.json")) for k in ["serial", "rerun"])
assert b["config"]["epochs"] == 2 and a["config"]["epochs"] == 4
for key in ["algo", "model", "seed", "grid"]:
    assert a["config"][key] == b["config"][key], key
assert a["dataset"]["spec"] == b["dataset"]["spec"]
assert [e["loss"] for e in b["epochs"]] == [e["loss"] for e in a["epochs"][:2]]  # the same run, bit for bit
assert "--config" in b["provenance"]["command_line"]
PY

# progress of long work (issue 17): reading a file and writing shards report on stderr, --quiet silences them
"$PYTHON" -c "
import random; random.seed(3)
print('\n'.join(f'{random.randrange(3000)} {random.randrange(3000)}' for _ in range(20000)))" >"$WORK/g.txt"
GCNLAB_PROGRESS_EVERY=0 "$GCNLAB" prepare --dataset "edges:$WORK/g.txt,features=8,classes=3" --shards 3x3 \
  --out "$WORK/prog" 2>"$WORK/prog.err" || { cat "$WORK/prog.err"; fail "prepare with progress"; }
grep -q "^reading $WORK/g.txt: .* MB/s" "$WORK/prog.err" && grep -q "^reading $WORK/g.txt: done, [0-9.]* MB in" "$WORK/prog.err" \
  && grep -q "^writing 3 x 3 shards of .* done, 9 shards in" "$WORK/prog.err" || { cat "$WORK/prog.err"; fail "progress lines"; }
GCNLAB_PROGRESS_EVERY=0 "$GCNLAB" prepare --dataset "edges:$WORK/g.txt,features=8,classes=3" --shards 3x3 \
  --out "$WORK/prog2" --quiet 2>"$WORK/quiet.err" || fail "prepare --quiet"
grep -q "reading\|writing" "$WORK/quiet.err" && { cat "$WORK/quiet.err"; fail "--quiet printed progress"; }

"$GCNLAB" info --dataset "$DS" > "$WORK/info" || fail "info"
grep -q "^nodes        700" "$WORK/info" || { cat "$WORK/info"; fail "info: nodes"; }
"$GCNLAB" compare "$WORK/serial.json" "$WORK/1d.json" > "$WORK/cmp" || fail "compare"
grep -q "1d P=3" "$WORK/cmp" && grep -q "bcast_dense KiB" "$WORK/cmp" || { cat "$WORK/cmp"; fail "compare table"; }
finish

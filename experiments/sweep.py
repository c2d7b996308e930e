#!/usr/bin/python3
"""gcnlab sweep runner: datasets x algorithms x rank counts (x grids) x repetitions.

    experiments/sweep.py SWEEP.json [--results DIR] [--gcnlab PATH] [--dry-list]
    experiments/sweep.py SWEEP.json --slurm DIR [--gpus-per-node 4] [--time 00:30:00] [--account A]

Locally every run is `mpirun -np P gcnlab train ... --out RUN.json` (with the
OpenMPI settings oversubscribed single-machine runs need), writing one results
JSON per run into DIR/runs/ and one line per run into DIR/index.jsonl (status
ok or failed, the error message, the parameters, the file, seconds). A run
whose results file exists and whose index line says ok is skipped, so an
interrupted sweep resumes; a failing run is recorded and the sweep goes on.
With --slurm, one batch script per rank count is written instead (one rank
per GPU, `--backend cuda`), running that rank count's runs with srun.

A sweep file (JSON):
    {"name": "demo",
     "datasets": ["sbm:nodes=20000,classes=8,avg-degree=16,features=64,seed=1"],
     "algorithms": ["serial", "1d", "2d", "plexus-3d"],
     "ranks": [1, 2, 4, 8],
     "grids": "default" | "all" | "auto",    # all: every factorisation for 2D/3D strategies
     "repetitions": 1,
     "options": {"epochs": 10, "hidden": 64},  # gcnlab train flags, shared by all runs
     "algorithm_options": {"scalegnn-4d": {"batch-size": 4096}},  # optional: flags of one algorithm
     "variants": [{"label": "metis", "partitioner": "metis"}]   # optional: extra flags per variant
    }
`serial` runs at 1 rank only. "auto" gives plexus-3d `--grid auto` (its plan).
"""
import argparse
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

GRID_DIMS = {"serial": 0, "1d": 1, "sa-1d": 1, "1.5d": 2, "sa-1.5d": 2, "2d": 2, "split-3d": 3, "plexus-3d": 3,
             "mggcn-1d": 1, "scalegnn-4d": 4}
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_mpi_yield_when_idle": "1",
    "OMPI_MCA_btl": "self,vader",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}


def factorisations(p, dims):
    """Every ordered factorisation of p into `dims` factors."""
    if dims == 1:
        return [[p]]
    return [[a] + rest for a in range(1, p + 1) if p % a == 0 for rest in factorisations(p // a, dims - 1)]


def load_sweep(path):
    with open(path) as f:
        sweep = json.load(f)
    for key in ("name", "datasets", "algorithms", "ranks"):
        if key not in sweep:
            raise SystemExit(f"sweep: error: '{path}' has no '{key}'")
    sweep.setdefault("grids", "default")
    sweep.setdefault("repetitions", 1)
    sweep.setdefault("options", {})
    sweep.setdefault("variants", [{"label": ""}])
    sweep.setdefault("algorithm_options", {})
    if sweep["grids"] not in ("default", "all", "auto"):
        raise SystemExit(f"sweep: error: grids must be default, all or auto (got '{sweep['grids']}')")
    for algo in sweep["algorithms"]:
        if algo not in GRID_DIMS:
            print(f"sweep: warning: unknown algorithm '{algo}' (gcnlab will report it)", file=sys.stderr)
    return sweep


def expand(sweep):
    """The runs of a sweep, each a dict of parameters with a stable id."""
    runs = []
    for dataset in sweep["datasets"]:
        for algo in sweep["algorithms"]:
            for p in sweep["ranks"]:
                if algo == "serial" and p != 1:
                    continue
                dims = GRID_DIMS.get(algo, 0)
                if sweep["grids"] == "all" and dims >= 2:
                    grids = ["x".join(map(str, g)) for g in factorisations(p, dims)]
                elif sweep["grids"] == "auto" and algo == "plexus-3d":
                    grids = ["auto"]
                else:
                    grids = [None]
                for grid in grids:
                    for variant in sweep["variants"]:
                        for rep in range(sweep["repetitions"]):
                            run = {"dataset": dataset, "algo": algo, "ranks": p, "grid": grid, "rep": rep,
                                   "variant": variant.get("label", ""),
                                   "flags": {**sweep["options"], **sweep["algorithm_options"].get(algo, {}),
                                             **{k: v for k, v in variant.items() if k != "label"}}}
                            run["id"] = run_id(run)
                            runs.append(run)
    return runs


def run_id(run):
    key = json.dumps({k: run[k] for k in ("dataset", "algo", "ranks", "grid", "rep", "variant", "flags")},
                     sort_keys=True)
    slug = f"{run['algo']}-np{run['ranks']}" + (f"-{run['grid']}" if run["grid"] else "")
    slug += (f"-{run['variant']}" if run["variant"] else "") + f"-r{run['rep']}"
    return re.sub(r"[^A-Za-z0-9_.-]", "_", slug) + "-" + hashlib.sha1(key.encode()).hexdigest()[:8]


def train_args(run, gcnlab, out, backend=None):
    args = [gcnlab, "train", "--algo", run["algo"], "--dataset", run["dataset"], "--out", str(out)]
    if run["grid"]:
        args += ["--grid", run["grid"]]
    if backend:
        args += ["--backend", backend]
    for k, v in run["flags"].items():
        if v is True:
            args.append(f"--{k}")
        elif v is not False and v is not None:
            args += [f"--{k}", str(v)]
    return args


def read_index(path):
    done = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                done[entry["id"]] = entry
    return done


def error_line(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()]
    for l in lines:
        if "gcnlab: error:" in l:
            return l.split("gcnlab: error:", 1)[1].strip()
    return lines[-1].strip() if lines else "no output"


def parses(path):
    """A run counts as ok only when its results file is complete JSON (gcnlab renames it into place whole)."""
    try:
        return json.loads(path.read_text()).get("schema") == "gcnlab.run/1"
    except (OSError, ValueError):
        return False


def run_local(sweep, runs, results, gcnlab, mpirun):
    out_dir = results / "runs"
    out_dir.mkdir(parents=True, exist_ok=True)
    index_path = results / "index.jsonl"
    done = read_index(index_path)
    todo = [r for r in runs if not (done.get(r["id"], {}).get("status") == "ok" and parses(out_dir / f"{r['id']}.json"))]
    print(f"sweep {sweep['name']}: {len(runs)} runs, {len(runs) - len(todo)} already done, {len(todo)} to run "
          f"-> {results}", flush=True)
    env = {**os.environ, **MPI_ENV}
    start = time.time()
    failures = 0
    for k, run in enumerate(todo):
        out = out_dir / f"{run['id']}.json"
        log = out_dir / f"{run['id']}.log"
        cmd = [mpirun, "-np", str(run["ranks"])] + train_args(run, gcnlab, out)
        t0 = time.time()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        seconds = time.time() - t0
        log.write_text(proc.stdout + proc.stderr)
        ok = proc.returncode == 0 and parses(out)
        entry = {"id": run["id"], "status": "ok" if ok else "failed", "seconds": round(seconds, 3),
                 "file": f"runs/{run['id']}.json" if ok else None,
                 "error": None if ok else error_line(proc.stderr),
                 **{key: run[key] for key in ("dataset", "algo", "ranks", "grid", "rep", "variant", "flags")}}
        if not ok:
            failures += 1
            out.unlink(missing_ok=True)
        with index_path.open("a") as f:
            f.write(json.dumps(entry) + "\n")
        elapsed = time.time() - start
        eta = elapsed / (k + 1) * (len(todo) - k - 1)
        status = "ok" if ok else f"FAILED: {entry['error']}"
        print(f"[{k + 1}/{len(todo)}] {run['algo']} np={run['ranks']}" + (f" grid={run['grid']}" if run["grid"] else "")
              + (f" {run['variant']}" if run["variant"] else "") + f" rep={run['rep']}: {status} ({seconds:.1f} s; "
              f"elapsed {elapsed:.0f} s, ETA {eta:.0f} s)", flush=True)
    print(f"sweep {sweep['name']}: done, {failures} failed run(s); index {index_path}")
    return failures


def write_slurm(sweep, runs, slurm_dir, gcnlab, gpus_per_node, time_limit, account):
    slurm_dir.mkdir(parents=True, exist_ok=True)
    by_ranks = {}
    for run in runs:
        by_ranks.setdefault(run["ranks"], []).append(run)
    scripts = []
    for p, group in sorted(by_ranks.items()):
        nodes = math.ceil(p / gpus_per_node)
        per_node = min(p, gpus_per_node)
        lines = ["#!/bin/bash",
                 f"#SBATCH --job-name=gcnlab-{sweep['name']}-np{p}",
                 f"#SBATCH --nodes={nodes}",
                 f"#SBATCH --ntasks={p}",
                 f"#SBATCH --ntasks-per-node={per_node}",
                 f"#SBATCH --gpus-per-node={per_node}",
                 f"#SBATCH --time={time_limit}",
                 f"#SBATCH --output={sweep['name']}-np{p}-%j.out"]
        if account:
            lines.append(f"#SBATCH --account={account}")
        lines += ["# one MPI rank per GPU; generated by experiments/sweep.py", "set -u",
                  'RESULTS=${RESULTS:-results/' + sweep["name"] + "}", 'mkdir -p "$RESULTS/runs"']
        for run in group:
            out = f"$RESULTS/runs/{run['id']}.json"
            args = train_args(run, gcnlab, out, backend="cuda")
            quoted = " ".join(a if a.startswith("$") or re.fullmatch(r"[A-Za-z0-9_./:=,+-]+", a) else "'" + a + "'"
                              for a in args)
            lines.append(f'[ -s "{out}" ] || srun --ntasks={p} --gpus-per-task=1 {quoted}')
        path = slurm_dir / f"{sweep['name']}-np{p}.sbatch"
        path.write_text("\n".join(lines) + "\n")
        scripts.append(path)
    print(f"wrote {len(scripts)} Slurm script(s) to {slurm_dir}: " + ", ".join(s.name for s in scripts))
    return scripts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep")
    root = Path(__file__).resolve().parent.parent
    ap.add_argument("--results", help="results folder (default results/<name>)")
    ap.add_argument("--gcnlab", default=os.environ.get("GCNLAB", str(root / "build" / "gcnlab")))
    ap.add_argument("--mpirun", default=os.environ.get("MPIEXEC", "mpirun"))
    ap.add_argument("--dry-list", action="store_true", help="print the expanded runs and stop")
    ap.add_argument("--slurm", help="write Slurm scripts to this folder instead of running")
    ap.add_argument("--gpus-per-node", type=int, default=4)
    ap.add_argument("--time", default="00:30:00")
    ap.add_argument("--account")
    a = ap.parse_args()
    sweep = load_sweep(a.sweep)
    runs = expand(sweep)
    if a.dry_list:
        for r in runs:
            print(" ".join(train_args(r, "gcnlab", f"{r['id']}.json")) + f"   # np={r['ranks']}")
        return 0
    if a.slurm:
        write_slurm(sweep, runs, Path(a.slurm), a.gcnlab, a.gpus_per_node, a.time, a.account)
        return 0
    results = Path(a.results) if a.results else root / "results" / sweep["name"]
    run_local(sweep, runs, results, a.gcnlab, a.mpirun)
    return 0  # failures are recorded in the index, not fatal


if __name__ == "__main__":
    sys.exit(main())

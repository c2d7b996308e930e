#!/usr/bin/python3
"""gcnlab sweep runner: datasets x algorithms x rank counts (x grids) x repetitions.

    experiments/sweep.py SWEEP.json [--results DIR] [--gcnlab PATH] [--dry-list]
    experiments/sweep.py SWEEP.json --slurm DIR [--gpus-per-node 4] [--cpus-per-task 8] [--time auto] [--account A]
    experiments/sweep.py SWEEP.json --collect --results DIR [--strict]

Locally every run is `mpirun -np P BINDING gcnlab train ... --out RUN.json` (BINDING gives
each rank its threads' cores: --map-by slot:PE=T --bind-to core, or --bind-to none where
ranks x threads exceed the cores; with the
OpenMPI settings oversubscribed single-machine runs need), writing one results
JSON per run into DIR/runs/ and one line per run into DIR/index.jsonl (status
ok or failed, the error message, the parameters, the file, seconds). A run
whose results file exists and whose index line says ok is skipped, so an
interrupted sweep resumes; a failing run is recorded and the sweep goes on.
With --slurm, Slurm job arrays are written instead: NAME-prepare.sbatch writes
every dataset once as a .gcl file; NAME-npP.sbatch is one array per rank count
(one task = one run, one MPI rank per GPU, `--backend cuda`, OMP threads from
--cpus-per-task, its own log in RESULTS/logs/ and status line in
RESULTS/status/; the task's arguments are line k of NAME-npP.runs.tsv); the
time limit per run is estimated from local runs of the same datasets when the
results folder has them; submit.sh submits the arrays after the prepare job.
`--collect` turns such a results folder into index.jsonl (plots/report.py
works on it). --strict: exit status 1 when any run failed.

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
The strategies, their grid axes and capabilities come from `gcnlab strategies --json`: a strategy that is
not distributed (serial) runs at 1 rank only; "auto" gives `--grid auto` to the strategies with a
performance model (plexus-3d: its plan).
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


def strategies(gcnlab, local):
    """The registry, name -> entry (`gcnlab strategies --json`): grid axes, whether it is distributed,
    capabilities. The sweep holds no strategy list of its own. `gcnlab` may be a cluster's path (--slurm):
    then this checkout's build (`local`) answers."""
    if not os.access(gcnlab, os.X_OK) and os.access(local, os.X_OK):
        gcnlab = local
    try:
        out = subprocess.run([gcnlab, "strategies", "--json"], check=True, capture_output=True, text=True,
                             env={**os.environ, **MPI_ENV}).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"sweep: error: cannot read the strategies from '{gcnlab} strategies --json' ({e}); "
                         "build gcnlab first (bash scripts/build.sh) or give --gcnlab PATH")
    return {s["name"]: s for s in json.loads(out)["strategies"]}


def load_sweep(path, registry):
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
    # "$GCNLAB_DATA_DIR/planetoid/cora": real data wherever this machine keeps it
    datasets = [os.path.expandvars(d) for d in sweep["datasets"]]
    for given, d in zip(sweep["datasets"], datasets):
        if "$" in d:
            raise SystemExit(f"sweep: error: dataset '{given}' names an environment variable that is not set "
                             "(GCNLAB_DATA_DIR: the directory that holds planetoid/ and mtx/)")
    sweep["datasets"] = datasets
    for algo in sweep["algorithms"]:
        if algo not in registry:
            print(f"sweep: warning: unknown algorithm '{algo}' (gcnlab will report it)", file=sys.stderr)
    return sweep


def expand(sweep, registry):
    """The runs of a sweep, each a dict of parameters with a stable id."""
    runs = []
    for dataset in sweep["datasets"]:
        for algo in sweep["algorithms"]:
            for p in sweep["ranks"]:
                entry = registry.get(algo, {})
                if not entry.get("distributed", True) and p != 1:
                    continue
                dims = entry.get("grid_axes", 0)
                if sweep["grids"] == "all" and dims >= 2:
                    grids = ["x".join(map(str, g)) for g in factorisations(p, dims)]
                elif sweep["grids"] == "auto" and entry.get("capabilities", {}).get("perf_model"):
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


def binding(run, mpirun):
    """Launch flags that give each rank its threads' cores (gcnlab warns when threads share one):
    OpenMPI binds a lone rank to one core by default, whatever --threads says."""
    try:
        version = subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return []
    if "Open MPI" not in version and "OpenRTE" not in version:  # mpiexec says OpenRTE
        return []
    threads = int(run["flags"].get("threads") or MPI_ENV["OMP_NUM_THREADS"])
    if run["ranks"] * threads <= len(os.sched_getaffinity(0)):
        return ["--map-by", f"slot:PE={threads}", "--bind-to", "core"]
    return ["--bind-to", "none"]  # more threads than cores: time-shared anyway, not all on one core


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
        cmd = [mpirun, "-np", str(run["ranks"])] + binding(run, mpirun) + train_args(run, gcnlab, out)
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


def shell_quote(a):
    """One word for bash; words naming $RESULTS are double-quoted so that the variable expands."""
    if re.fullmatch(r"[A-Za-z0-9_./:=,+-]+", a):
        return a
    if re.fullmatch(r"[A-Za-z0-9_./:=,+$-]+", a):
        return f'"{a}"'
    return "'" + a.replace("'", "'\\''") + "'"


def estimate_time(results, runs, fallback):
    """Slurm --time per run: 3x the slowest local run of the same datasets, at least 5 minutes, rounded up to
    minutes; `fallback` when no local run is recorded (results/<name>/index.jsonl)."""
    index = read_index(results / "index.jsonl") if results else {}
    datasets = {r["dataset"] for r in runs}
    seconds = [e["seconds"] for e in index.values() if e.get("status") == "ok" and e.get("dataset") in datasets]
    if not seconds:
        return fallback, "default"
    minutes = max(5, math.ceil(3 * max(seconds) / 60))
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00", f"3 x the slowest of {len(seconds)} local run(s)"


def write_slurm(sweep, runs, slurm_dir, gcnlab, gpus_per_node, cpus_per_task, time_limit, account, local_results,
                backend="cuda"):
    """One job array per rank count (one task = one run, its own log and status file), a prepare job that writes
    every dataset once as a .gcl file, and submit.sh, which submits the arrays after the prepare job."""
    slurm_dir.mkdir(parents=True, exist_ok=True)
    name = sweep["name"]
    header = ["#!/bin/bash"]
    common = ([f"#SBATCH --account={account}"] if account else []) + [
        "# generated by experiments/sweep.py; RESULTS (default results/NAME) is shared by all jobs", "set -u",
        f'RESULTS=${{RESULTS:-results/{name}}}', 'mkdir -p "$RESULTS/runs" "$RESULTS/logs" "$RESULTS/status" "$RESULTS/data"']
    datasets = {d: f"$RESULTS/data/d{k}.gcl" for k, d in enumerate(sweep["datasets"])}
    prep = header + [f"#SBATCH --job-name=gcnlab-{name}-prepare", "#SBATCH --nodes=1", "#SBATCH --ntasks=1",
                     f"#SBATCH --cpus-per-task={cpus_per_task}", "#SBATCH --time=01:00:00",
                     f"#SBATCH --output={name}-prepare-%j.out"] + common
    prep.append("# every dataset once (synthetic graphs are not regenerated by each run)")
    for spec, gcl in datasets.items():
        prep.append(f'[ -s "{gcl}" ] || srun --ntasks=1 {shell_quote(gcnlab)} prepare --dataset {shell_quote(spec)} '
                    f'--out "{gcl}"')
    scripts = [slurm_dir / f"{name}-prepare.sbatch"]
    scripts[0].write_text("\n".join(prep) + "\n")
    time_per_run, time_source = (time_limit, "--time") if time_limit != "auto" else \
        estimate_time(local_results, runs, "00:30:00")
    by_ranks = {}
    for run in runs:
        by_ranks.setdefault(run["ranks"], []).append(run)
    for p, group in sorted(by_ranks.items()):
        nodes = math.ceil(p / gpus_per_node)
        per_node = min(p, gpus_per_node)
        table = slurm_dir / f"{name}-np{p}.runs.tsv"  # line k: task k's id and gcnlab arguments
        rows = []
        for run in group:
            staged = {**run, "dataset": "gcl:" + datasets[run["dataset"]]}
            args = train_args(staged, gcnlab, f"$RESULTS/runs/{run['id']}.json", backend=backend)
            rows.append(run["id"] + "\t" + " ".join(shell_quote(a) for a in args))
        table.write_text("\n".join(rows) + "\n")
        lines = header + [f"#SBATCH --job-name=gcnlab-{name}-np{p}",
                          f"#SBATCH --array=0-{len(group) - 1}",
                          f"#SBATCH --nodes={nodes}",
                          f"#SBATCH --ntasks={p}",
                          f"#SBATCH --ntasks-per-node={per_node}",
                          f"#SBATCH --gpus-per-node={per_node}",
                          f"#SBATCH --cpus-per-task={cpus_per_task}",
                          f"#SBATCH --time={time_per_run}  # per run: {time_source}",
                          f"#SBATCH --output={name}-np{p}-%A_%a.out"] + common
        lines += [
            "# one array task = one run: one MPI rank per GPU, its threads from --cpus-per-task",
            f'TABLE=${{TABLE:-${{SLURM_SUBMIT_DIR:-$(dirname "$0")}}/{table.name}}}',  # sbatch runs a copy of this file
            'line=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" "$TABLE")',
            'id=${line%%$\'\\t\'*}',
            'eval "set -- ${line#*$\'\\t\'}"',
            'if [ -s "$RESULTS/runs/$id.json" ] && grep -q "^ok" "$RESULTS/status/$id" 2>/dev/null; then exit 0; fi',
            "export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}",
            "start=$(date +%s)",
            f'srun --ntasks={p} --cpus-per-task={cpus_per_task} --gpus-per-task=1 --gpu-bind=single:1 "$@" '
            '>"$RESULTS/logs/$id.log" 2>&1',
            "rc=$?",
            'status=ok; [ $rc -eq 0 ] && [ -s "$RESULTS/runs/$id.json" ] || status=failed',
            'echo "$status $(( $(date +%s) - start )) $rc" >"$RESULTS/status/$id"',
            "exit $rc"]
        path = slurm_dir / f"{name}-np{p}.sbatch"
        path.write_text("\n".join(lines) + "\n")
        scripts.append(path)
    submit = ["#!/bin/bash", "# submits the prepare job, then every rank count's array after it succeeded", "set -eu",
              'cd "$(dirname "$0")"',
              f"prep=$(sbatch --parsable {name}-prepare.sbatch)"]
    submit += [f"sbatch --dependency=afterok:$prep {s.name}" for s in scripts[1:]]
    (slurm_dir / "submit.sh").write_text("\n".join(submit) + "\n")
    print(f"wrote {len(scripts)} Slurm script(s) and submit.sh to {slurm_dir}: " + ", ".join(s.name for s in scripts)
          + f"; --time per run {time_per_run} ({time_source})")
    return scripts


def collect(sweep, runs, results):
    """Index a results folder written on a cluster (runs/, logs/, status/ of the Slurm array tasks):
    one index line per run that reported, so that plots/report.py works on it. Returns the failures."""
    index_path = results / "index.jsonl"
    done = read_index(index_path)
    failures, added = 0, 0
    with index_path.open("a") as f:
        for run in runs:
            status_file = results / "status" / run["id"]
            if not status_file.exists():
                continue
            status, seconds, *_ = status_file.read_text().split() + ["0"]
            out = results / "runs" / f"{run['id']}.json"
            ok = status == "ok" and parses(out)
            log = results / "logs" / f"{run['id']}.log"
            entry = {"id": run["id"], "status": "ok" if ok else "failed", "seconds": float(seconds),
                     "file": f"runs/{run['id']}.json" if ok else None,
                     "error": None if ok else error_line(log.read_text() if log.exists() else ""),
                     **{key: run[key] for key in ("dataset", "algo", "ranks", "grid", "rep", "variant", "flags")}}
            failures += not ok
            if done.get(run["id"]) != entry:
                f.write(json.dumps(entry) + "\n")
                added += 1
    missing = sum(not (results / "status" / r["id"]).exists() for r in runs)
    print(f"sweep {sweep['name']}: collected {len(runs) - missing} of {len(runs)} run(s) from {results} "
          f"({added} new index line(s), {failures} failed, {missing} not run yet); index {index_path}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep")
    root = Path(__file__).resolve().parent.parent
    ap.add_argument("--results", help="results folder (default results/<name>)")
    ap.add_argument("--gcnlab", default=os.environ.get("GCNLAB", str(root / "build" / "gcnlab")))
    ap.add_argument("--mpirun", default=os.environ.get("MPIEXEC", "mpirun"))
    ap.add_argument("--dry-list", action="store_true", help="print the expanded runs and stop")
    ap.add_argument("--slurm", help="write Slurm job arrays to this folder instead of running")
    ap.add_argument("--gpus-per-node", type=int, default=4)
    ap.add_argument("--cpus-per-task", type=int, default=8, help="CPU cores per rank (its OpenMP threads)")
    ap.add_argument("--time", default="auto",
                    help="Slurm time per run (one array task); auto: 3x the slowest local run when the results "
                         "folder has one, else 00:30:00")
    ap.add_argument("--account")
    ap.add_argument("--backend", default="cuda", help="--slurm: the runs' --backend (cuda: one rank per GPU)")
    ap.add_argument("--collect", action="store_true",
                    help="index the results folder a cluster's array tasks wrote (runs/, logs/, status/)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a run failed")
    a = ap.parse_args()
    registry = strategies(a.gcnlab, os.environ.get("GCNLAB", str(root / "build" / "gcnlab")))
    sweep = load_sweep(a.sweep, registry)
    runs = expand(sweep, registry)
    if a.dry_list:
        for r in runs:
            print(" ".join(train_args(r, "gcnlab", f"{r['id']}.json")) + f"   # np={r['ranks']}")
        return 0
    results = Path(a.results) if a.results else root / "results" / sweep["name"]
    if a.slurm:
        write_slurm(sweep, runs, Path(a.slurm), a.gcnlab, a.gpus_per_node, a.cpus_per_task, a.time, a.account, results,
                    a.backend)
        return 0
    failures = collect(sweep, runs, results) if a.collect else run_local(sweep, runs, results, a.gcnlab, a.mpirun)
    return 1 if a.strict and failures else 0  # failures are recorded in the index; fatal only with --strict


if __name__ == "__main__":
    sys.exit(main())

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
Each task checkpoints into RESULTS/checkpoints/ID and resumes from it (--resume
auto); Slurm's warning signal (--signal=B:USR1@LEAD, LEAD from local runs'
epoch and checkpoint times) is passed to the run, which stops at its next epoch
boundary with a checkpoint and exit status 75, and the task requeues itself
(scontrol requeue, up to --max-requeues times). A task killed outright resumes
the same way when Slurm requeues it (--requeue). A sweep file is checked
before anything is written: a bad field is one line and exit status 2.
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
     "variants": [{"label": "metis", "partitioner": "metis"}],  # optional: extra flags per variant
     "models": ["gcn", "scalegnn"]   # optional: the --model axis (absent: gcnlab's default, no flag)
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
    capabilities, and under "models" the models it runs (`gcnlab models --json`). The sweep holds no
    strategy or model list of its own. `gcnlab` may be a cluster's path (--slurm): then this checkout's
    build (`local`) answers."""
    if not os.access(gcnlab, os.X_OK) and os.access(local, os.X_OK):
        gcnlab = local

    def ask(what):
        try:
            return json.loads(subprocess.run([gcnlab, what, "--json"], check=True, capture_output=True, text=True,
                                             env={**os.environ, **MPI_ENV}).stdout)
        except (OSError, subprocess.CalledProcessError) as e:
            raise SystemExit(f"sweep: error: cannot read the {what} from '{gcnlab} {what} --json' ({e}); "
                             "build gcnlab first (bash scripts/build.sh) or give --gcnlab PATH")

    registry = {s["name"]: {**s, "models": []} for s in ask("strategies")["strategies"]}
    for m in ask("models")["models"]:
        for name in m["strategies"]:
            registry[name]["models"].append(m["name"])
    return registry


def die(message):
    """A mistake in the sweep file or the command line: one line, exit status 2, nothing written."""
    print(f"sweep: error: {message}", file=sys.stderr)
    raise SystemExit(2)


# A sweep's name becomes file names, a Slurm job name and part of the generated scripts: a plain identifier.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def load_sweep(path):
    """The sweep file, checked before anything is written: every field of the right type, the name a plain
    identifier. Any problem is one line (die)."""
    try:
        with open(path) as f:
            sweep = json.load(f)
    except OSError as e:
        die(f"cannot read '{path}' ({e.strerror})")
    except ValueError as e:
        die(f"'{path}' is not valid JSON ({e})")
    if not isinstance(sweep, dict):
        die(f"'{path}' is not a JSON object")
    for key in ("name", "datasets", "algorithms", "ranks"):
        if key not in sweep:
            die(f"'{path}' has no '{key}'")
    name = sweep["name"]
    if not isinstance(name, str) or not NAME.fullmatch(name) or ".." in name:
        die(f"'{path}': name {json.dumps(name)} is not a plain identifier (letters, digits, '_', '.', '-'; "
            "it names files, Slurm jobs and the results folder)")
    for key in ("datasets", "algorithms"):
        if not isinstance(sweep[key], list) or not sweep[key] or not all(isinstance(v, str) and v for v in sweep[key]):
            die(f"'{path}': {key} must be a non-empty list of strings")
    if not isinstance(sweep["ranks"], list) or not sweep["ranks"] or \
            not all(isinstance(p, int) and not isinstance(p, bool) and p >= 1 for p in sweep["ranks"]):
        die(f"'{path}': ranks must be a non-empty list of positive integers")
    sweep.setdefault("grids", "default")
    sweep.setdefault("repetitions", 1)
    sweep.setdefault("options", {})
    sweep.setdefault("variants", [{"label": ""}])
    sweep.setdefault("algorithm_options", {})
    if sweep["grids"] not in ("default", "all", "auto"):
        die(f"'{path}': grids must be default, all or auto (got {json.dumps(sweep['grids'])})")
    reps = sweep["repetitions"]
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        die(f"'{path}': repetitions must be a positive integer")
    if not isinstance(sweep["options"], dict) or not isinstance(sweep["algorithm_options"], dict) or \
            not all(isinstance(v, dict) for v in sweep["algorithm_options"].values()):
        die(f"'{path}': options must be an object of gcnlab train flags, algorithm_options one per algorithm")
    models = sweep.get("models")
    if models is not None and (not isinstance(models, list) or not models or
                               not all(isinstance(m, str) and NAME.fullmatch(m) for m in models)):
        die(f"'{path}': models must be a non-empty list of model names (gcnlab train --model)")
    if not isinstance(sweep["variants"], list) or not sweep["variants"] or \
            not all(isinstance(v, dict) and isinstance(v.get("label", ""), str) for v in sweep["variants"]):
        die(f"'{path}': variants must be a non-empty list of objects (a label and flags)")
    # "$GCNLAB_DATA_DIR/planetoid/cora": real data wherever this machine keeps it
    datasets = [os.path.expandvars(d) for d in sweep["datasets"]]
    for given, d in zip(sweep["datasets"], datasets):
        if "$" in d:
            die(f"dataset '{given}' names an environment variable that is not set "
                "(GCNLAB_DATA_DIR: the directory that holds planetoid/ and mtx/)")
    sweep["datasets"] = datasets
    return sweep


def check_algorithms(sweep, registry):
    for algo in sweep["algorithms"]:
        if algo not in registry:
            print(f"sweep: warning: unknown algorithm '{algo}' (gcnlab will report it)", file=sys.stderr)


def expand(sweep, registry):
    """The runs of a sweep, each a dict of parameters with a stable id."""
    runs = []
    known_models = {m for entry in registry.values() for m in entry.get("models", [])}  # others: gcnlab reports them
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
                        for model in sweep.get("models") or [None]:  # None: no --model (ids as before the axis)
                            if model in known_models and model not in entry.get("models", [model]):
                                continue  # the registry says the strategy does not run this model
                            for rep in range(sweep["repetitions"]):
                                label = variant.get("label", "")
                                if model:
                                    label = f"{label}-{model}" if label else model
                                flags = {**sweep["options"], **sweep["algorithm_options"].get(algo, {}),
                                         **{k: v for k, v in variant.items() if k != "label"}}
                                if model:
                                    flags["model"] = model
                                run = {"dataset": dataset, "algo": algo, "ranks": p, "grid": grid, "rep": rep,
                                       "variant": label, "flags": flags}
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
    """A run counts as ok only when its results file is complete JSON (gcnlab renames it into place whole) of a
    run that completed its epochs (not the partial results of a run stopped by a signal)."""
    try:
        r = json.loads(path.read_text())
        return r.get("schema") == "gcnlab.run/1" and r.get("status", "complete") == "complete"
    except (OSError, ValueError, AttributeError):
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


# The exit status of a run that stopped on the scheduler's signal after writing its checkpoint
# (gcnlab's stop::kStoppedExit, EX_TEMPFAIL): the array task requeues it.
STOPPED_EXIT = 75


def signal_lead(results, runs, fallback=120):
    """Seconds before the time limit at which Slurm sends the warning signal (--signal=B:USR1@LEAD): the run
    finishes its epoch and writes a checkpoint in them. From local results of the same datasets: 30 s + 3 x
    (the slowest epoch + the longest checkpoint write, or the weights and Adam moments at 100 MB/s where no
    checkpoint was written), at least 60 s; `fallback` without local runs."""
    index = read_index(results / "index.jsonl") if results else {}
    datasets = {r["dataset"] for r in runs}
    need = []
    for e in index.values():
        if e.get("status") != "ok" or e.get("dataset") not in datasets or not e.get("file"):
            continue
        try:
            r = json.loads((results / e["file"]).read_text())
            epoch = max(x["time_s"] for x in r["epochs"])
            dims = r["config"]["model"]["dims"]
            write = (r["config"].get("checkpoint") or {}).get("write_seconds_max")
            if write is None:
                write = 3 * 4 * sum(a * b for a, b in zip(dims, dims[1:])) / 100e6
            need.append(epoch + write)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    if not need:
        return fallback, "default"
    return max(60, math.ceil(30 + 3 * max(need))), f"30 s + 3 x the slowest epoch and checkpoint of {len(need)} local run(s)"


def write_slurm(sweep, runs, slurm_dir, gcnlab, gpus_per_node, cpus_per_task, time_limit, account, local_results,
                backend="cuda", max_requeues=3):
    """One job array per rank count (one task = one run, its own log and status file), a prepare job that writes
    every dataset once as a .gcl file, and submit.sh, which submits the arrays after the prepare job. Each run
    checkpoints under RESULTS/checkpoints/ID and resumes from there (--resume auto); Slurm's warning signal
    (USR1, LEAD seconds before the time limit) is passed to it, it stops at the next epoch boundary with a
    checkpoint and exit status 75, and the task requeues itself (scontrol requeue) up to MAX_REQUEUES times."""
    slurm_dir.mkdir(parents=True, exist_ok=True)
    name = sweep["name"]  # a plain identifier (load_sweep)
    header = ["#!/bin/bash"]
    common = ([f"#SBATCH --account={account}"] if account else []) + [
        "# generated by experiments/sweep.py; RESULTS (default results/NAME) is shared by all jobs", "set -u",
        f'RESULTS="${{RESULTS:-results/{name}}}"', 'mkdir -p "$RESULTS/runs" "$RESULTS/logs" "$RESULTS/status" "$RESULTS/data"']
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
    lead, lead_source = signal_lead(local_results, runs)
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
                          f"#SBATCH --signal=B:USR1@{lead}  # the warning: {lead_source}",
                          "#SBATCH --requeue",
                          "#SBATCH --open-mode=append",
                          f"#SBATCH --output={name}-np{p}-%A_%a.out"] + common
        lines += [
            "# one array task = one run: one MPI rank per GPU, its threads from --cpus-per-task",
            f'TABLE="${{TABLE:-${{SLURM_SUBMIT_DIR:-$(dirname "$0")}}/{table.name}}}"',  # sbatch runs a copy
            f"MAX_REQUEUES=${{MAX_REQUEUES:-{max_requeues}}}",
            'line=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" "$TABLE")',
            'id=${line%%$\'\\t\'*}',
            'eval "set -- ${line#*$\'\\t\'}"',
            'if [ -s "$RESULTS/runs/$id.json" ] && grep -q "^ok" "$RESULTS/status/$id" 2>/dev/null; then exit 0; fi',
            "export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}",
            "start=$(date +%s)",
            "# checkpoints of this run; a requeued task (or one killed outright) resumes from the newest",
            f'srun --ntasks={p} --cpus-per-task={cpus_per_task} --gpus-per-task=1 --gpu-bind=single:1 "$@" '
            f'--checkpoint "$RESULTS/checkpoints/$id" --resume auto --stop-grace {lead} '
            '>>"$RESULTS/logs/$id.log" 2>&1 &',
            "run=$!",
            "# Slurm's warning (B:USR1) goes to this shell only: pass it to the run, which stops at its next epoch",
            "# boundary with a checkpoint (exit 75). At the time limit Slurm sends SIGTERM to the tasks itself;",
            "# this shell stays to requeue.",
            "trap 'kill -USR1 $run 2>/dev/null' USR1",
            "trap ':' TERM",
            "wait $run; rc=$?",
            "while kill -0 $run 2>/dev/null; do wait $run; rc=$?; done  # wait returns early when a trap runs",
            "n=${SLURM_RESTART_COUNT:-0}",
            f"if [ $rc -eq {STOPPED_EXIT} ] && [ \"$n\" -lt \"$MAX_REQUEUES\" ]; then",
            '  echo "requeued $(( $(date +%s) - start )) $rc $((n + 1))" >"$RESULTS/status/$id"',
            '  scontrol requeue "$SLURM_JOB_ID" && exit 0',
            "fi",
            'status=ok; [ $rc -eq 0 ] && [ -s "$RESULTS/runs/$id.json" ] || status=failed',
            f'[ $rc -eq {STOPPED_EXIT} ] && status=stopped  # out of requeues: resubmit to continue from the checkpoint',
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
          + f"; --time per run {time_per_run} ({time_source}); warning signal USR1 {lead} s before it ({lead_source}), "
          f"up to {max_requeues} requeue(s)")
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
            if status == "requeued":  # stopped on the warning signal, waiting to resume: not done yet
                continue
            out = results / "runs" / f"{run['id']}.json"
            ok = status == "ok" and parses(out)
            log = results / "logs" / f"{run['id']}.log"
            error = error_line(log.read_text() if log.exists() else "")
            if status == "stopped":
                error = "stopped by the warning signal with no requeue left: resubmit to resume from its checkpoint"
            entry = {"id": run["id"], "status": "ok" if ok else "failed", "seconds": float(seconds),
                     "file": f"runs/{run['id']}.json" if ok else None,
                     "error": None if ok else error,
                     **{key: run[key] for key in ("dataset", "algo", "ranks", "grid", "rep", "variant", "flags")}}
            failures += not ok
            if done.get(run["id"]) != entry:
                f.write(json.dumps(entry) + "\n")
                added += 1
    missing = sum(not (results / "status" / r["id"]).exists() or
                  (results / "status" / r["id"]).read_text().startswith("requeued") for r in runs)
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
    ap.add_argument("--max-requeues", type=int, default=3,
                    help="--slurm: how often a run stopped by the warning signal requeues itself (default 3)")
    ap.add_argument("--backend", default="cuda", help="--slurm: the runs' --backend (cuda: one rank per GPU)")
    ap.add_argument("--collect", action="store_true",
                    help="index the results folder a cluster's array tasks wrote (runs/, logs/, status/)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a run failed")
    a = ap.parse_args()
    if a.account is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+", a.account):
        die(f"--account {json.dumps(a.account)} is not a plain identifier")
    if a.time != "auto" and not re.fullmatch(r"(\d+-)?\d{1,3}(:\d\d){0,2}", a.time):
        die(f"--time {json.dumps(a.time)} is not a Slurm time (MINUTES, HH:MM:SS or D-HH:MM:SS) or auto")
    sweep = load_sweep(a.sweep)  # checked before anything is read or written
    registry = strategies(a.gcnlab, os.environ.get("GCNLAB", str(root / "build" / "gcnlab")))
    check_algorithms(sweep, registry)
    runs = expand(sweep, registry)
    if a.dry_list:
        for r in runs:
            print(" ".join(train_args(r, "gcnlab", f"{r['id']}.json")) + f"   # np={r['ranks']}")
        return 0
    results = Path(a.results) if a.results else root / "results" / sweep["name"]
    if a.slurm:
        write_slurm(sweep, runs, Path(a.slurm), a.gcnlab, a.gpus_per_node, a.cpus_per_task, a.time, a.account, results,
                    a.backend, a.max_requeues)
        return 0
    failures = collect(sweep, runs, results) if a.collect else run_local(sweep, runs, results, a.gcnlab, a.mpirun)
    return 1 if a.strict and failures else 0  # failures are recorded in the index; fatal only with --strict


if __name__ == "__main__":
    sys.exit(main())

"""Shared pieces of the plot scripts: reading a results folder, titles, saving.

A results folder is what experiments/sweep.py writes (index.jsonl + runs/*.json)
or any folder of gcnlab results JSON files (searched recursively).
Run the scripts with /usr/bin/python3 (Debian's matplotlib, numpy, pandas).
"""
import argparse
import functools
import json
import os
import subprocess
import statistics
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, LogLocator, MaxNLocator, NullLocator, ScalarFormatter  # noqa: E402

# Figures readable at a paper's column width: small, consistent type.
plt.rcParams.update({"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 7,
                     "xtick.labelsize": 7, "ytick.labelsize": 7, "figure.titlesize": 8})

COMPUTE = ["spmm", "gemm", "elementwise", "loss", "optimizer", "pack", "sampling", "sddmm", "edge_softmax"]
COMMUNICATION = ["bcast_dense", "bcast_sparse", "allreduce", "allgather", "reduce_scatter", "alltoall", "p2p",
                 "staging"]
CATEGORIES = COMPUTE + COMMUNICATION + ["other"]
MIB = 1 << 20


def load_runs(folder):
    """Every successful run in `folder` (schema gcnlab.run/1, status complete), each with '_file'."""
    folder = Path(folder)
    files = []
    index = folder / "index.jsonl"
    if index.exists():
        for line in index.read_text().splitlines():
            if line.strip():
                e = json.loads(line)
                if e.get("status") == "ok" and e.get("file"):
                    files.append(folder / e["file"])
    else:
        files = sorted(folder.rglob("*.json"))
    runs = []
    for f in dict.fromkeys(files):  # a rerun appends a second index line for the same file
        try:
            j = json.loads(Path(f).read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if j.get("schema") == "gcnlab.run/1" and j.get("status", "complete") == "complete":  # not a stop's partial results
            j["_file"] = str(f)
            runs.append(j)
    return runs


# (column, JSON path) of one run's row; common/results/results.cpp kRunColumns
# is the same list (`gcnlab compare --csv` writes the same columns).
RUN_COLUMNS = [
    ("dataset", "dataset/name"), ("spec", "dataset/spec"), ("nodes", "dataset/nodes"), ("nnz", "dataset/nnz"),
    ("algo", "config/algo"), ("grid", "config/grid"), ("ranks", "config/ranks"), ("threads", "config/threads"),
    ("backend", "config/backend"), ("seed", "config/seed"), ("epochs", "config/epochs"), ("dims", "config/model/dims"),
    ("dropout", "config/model/dropout"), ("model", "config/model/variant"), ("partitioner", "config/partitioner"), ("permutation", "config/permutation"),
    ("comm_precision", "config/comm_precision"), ("batch_size", "config/minibatch/batch_size"),
    ("dp_groups", "config/minibatch/dp_groups"), ("epoch_time_s", "summary/epoch_time_s"),
    ("setup_time_s", "summary/setup_time_s"), ("final_loss", "summary/final_loss"), ("test_acc", "summary/test_acc"),
    ("best_val_acc", "summary/best_val_acc"), ("peak_bytes_max", "memory/peak_bytes_max"),
    ("host_peak_bytes_max", "memory/host_peak_bytes_max"), ("nnz_max_over_mean", "load_balance/nnz_max_over_mean"),
    ("oversubscribed", "provenance/oversubscribed"), ("timestamp_utc", "provenance/timestamp_utc"),
    ("git_sha", "git_sha")]
CATEGORY_FIELDS = ["time_max_s", "time_mean_s", "hidden_time_max_s", "wire_bytes_max", "wire_bytes_total"]


def _at(run, path):
    v = run
    for k in path.split("/"):
        if not isinstance(v, dict) or v.get(k) is None:
            return None
        v = v[k]
    return "x".join(map(str, v)) if isinstance(v, list) else v


def flatten(run):
    """One run as a flat dict: RUN_COLUMNS, then '<category>.<field>' of its breakdown."""
    row = {"file": run.get("_file")}
    row.update({name: _at(run, path) for name, path in RUN_COLUMNS})
    for cat in CATEGORIES:
        for f in CATEGORY_FIELDS:
            row[f"{cat}.{f}"] = _at(run, f"breakdown/{cat}/{f}")
    return row


def dataframe(runs):
    """The runs as a pandas DataFrame, one row per run (columns of flatten())."""
    import pandas as pd
    return pd.DataFrame([flatten(r) for r in runs])


def failures(folder):
    index = Path(folder) / "index.jsonl"
    if not index.exists():
        return []
    latest = {}
    for line in index.read_text().splitlines():
        if line.strip():
            e = json.loads(line)
            latest[e["id"]] = e
    return [e for e in latest.values() if e["status"] != "ok"]


@functools.lru_cache(maxsize=None)
def strategy_order():
    """The registered strategies in the registry's order (`gcnlab strategies --json`; the binary is $GCNLAB,
    else build/gcnlab of this checkout). Without a binary: none (strategies sort by name)."""
    gcnlab = os.environ.get("GCNLAB", str(Path(__file__).resolve().parent.parent / "build" / "gcnlab"))
    try:
        out = subprocess.run([gcnlab, "strategies", "--json"], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"plots: warning: no strategy registry from '{gcnlab} strategies --json' ({e}); sorting by name",
              file=sys.stderr)
        return ()
    return tuple(s["name"] for s in json.loads(out)["strategies"])


def algo_key(a):
    order = strategy_order()
    return (order.index(a) if a in order else len(order), a)


# One colour and marker per strategy, the same in every figure, from the registry's order: 12 colours (tab10
# and two more), so that no two of the registered strategies share one (with 10, serial and scalegnn-4d did).
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#393b79", "#8c6d31"]
MARKERS = "os^vD<>ph*XP"


def algo_style(a):
    """(colour, marker) of strategy `a`: by its place in the registry (names it does not know: after them)."""
    order = strategy_order()
    k = order.index(a) if a in order else len(order) + sum(map(ord, a))
    return PALETTE[k % len(PALETTE)], MARKERS[k % len(MARKERS)]


def label(run):
    c = run["config"]
    grid = "x".join(map(str, c["grid"]))
    return f"{c['algo']} {grid}" if len(c["grid"]) > 1 else c["algo"]


def facet(run):
    """The panel a run belongs to: its dataset, and its model where that is not GCN (a sweep's models axis):
    runs of different models are never compared within one figure."""
    model = run["config"].get("model", {}).get("variant", "gcn")
    return run["dataset"]["name"] if model == "gcn" else f"{run['dataset']['name']}-{model}"


def by_dataset(runs):
    """Runs by facet (dataset, model), in the order met."""
    out = {}
    for r in runs:
        out.setdefault(facet(r), []).append(r)
    return out


def machine(runs):
    m = next((r.get("machine") for r in runs if r.get("machine")), None)
    if not m:
        return "unknown machine"
    return f"{m.get('host', '?')} ({m.get('cpu', '?')}, {m.get('cores', '?')} cores)"


def oversubscribed(run):
    """More threads than cores on a node: from the run's provenance, or (older
    files) its ranks x threads against the machine's cores on one node."""
    p = run.get("provenance")
    if p:
        return bool(p["oversubscribed"])
    c, m = run["config"], run.get("machine") or {}
    return bool(m.get("cores")) and c["ranks"] * c.get("threads", 1) > m["cores"]


def title(what, runs):
    names = sorted({r["dataset"]["name"] for r in runs})
    note = ""
    if any(oversubscribed(r) for r in runs):
        note = "\noversubscribed: more ranks x threads than cores (timings of time-shared cores)"
    return f"{what} — {', '.join(names)} — {machine(runs)}{note}"


def rank_label(runs):
    """'GPUs P' for CUDA runs, 'ranks P' for CPU ranks (which are not GPUs)."""
    return "GPUs P" if all(r["config"]["backend"] == "cuda" for r in runs) else "ranks P"


def rank_axis(ax, ps):
    """Log2 x axis with one integer tick per rank count and no minor ticks."""
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(ps))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(ps, [str(p) for p in ps])


def log_axis_labels(ax):
    """Log y axis with labels at 1, 2 and 5 of every decade (not one tick per plot)."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    fmt = ScalarFormatter()
    fmt.set_scientific(False)
    ax.yaxis.set_major_formatter(fmt)
    ax.yaxis.set_minor_locator(NullLocator())


def legend_outside(ax, **kw):
    """The legend right of the axes, where it hides no data."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0, **kw)


def rank_panels(bars, runs, panel_height=2.6):
    """One axes per rank count (two per row), sized for the widest panel's bars,
    so that a figure of many strategies stays readable at a page's width.
    Returns the figure and [(axes, P, that P's bars in the given order)]."""
    ps = sorted({b["ranks"] for b in bars})
    cols = min(2, len(ps))
    rows = -(-len(ps) // cols)
    widest = max(sum(b["ranks"] == p for b in bars) for p in ps)
    fig, axes = plt.subplots(rows, cols, squeeze=False,
                             figsize=(cols * (0.3 * widest + 1.3) + 1.6, rows * panel_height + 0.6))
    for ax in axes.flat[len(ps):]:
        ax.set_visible(False)
    panels = []
    for ax, p in zip(axes.flat, ps):
        ax.set_title(f"{rank_label(runs)} = {p}")
        panels.append((ax, p, [b for b in bars if b["ranks"] == p]))
    return fig, panels


def panel_legend(fig, panels, **kw):
    """One legend for all panels, right of them."""
    handles = {}
    for ax, _, _ in panels:
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    return fig.legend(list(handles.values()), list(handles), loc="upper left", bbox_to_anchor=(1.0, 0.95),
                      frameon=False, **kw)


def algo_ticks(ax, x, panel):
    ax.set_xticks(x, [b["algo"] for b in panel], rotation=50, ha="right", rotation_mode="anchor")


def epoch_time(run):
    return run["summary"]["epoch_time_s"]


def spread_per_point(runs):
    """(algo, P) -> (min, max) epoch time over the repetitions of the grid best_per_point chose."""
    best = best_per_point(runs)
    out = {}
    for (algo, p), rep in best.items():
        grid = rep["config"]["grid"]
        times = [epoch_time(r) for r in runs
                 if (r["config"]["algo"], r["config"]["ranks"], r["config"]["grid"]) == (algo, p, grid)]
        out[(algo, p)] = (min(times), max(times))
    return out


def best_per_point(runs):
    """(algo, P) -> the run with the lowest median epoch time among grids (repetitions: median)."""
    groups = {}
    for r in runs:
        c = r["config"]
        groups.setdefault((c["algo"], c["ranks"], tuple(c["grid"])), []).append(r)
    best = {}
    for (algo, p, _), rs in groups.items():
        med = statistics.median(epoch_time(r) for r in rs)
        rep = min(rs, key=lambda r: abs(epoch_time(r) - med))
        if (algo, p) not in best or med < epoch_time(best[(algo, p)]):
            best[(algo, p)] = rep
    return best


def best_points_by_dataset(runs):
    """(dataset, its runs, {(algo, P): best run} ordered by algorithm then P) for every dataset with runs."""
    for dataset, rs in by_dataset(runs).items():
        best = best_per_point(rs)
        if best:
            yield dataset, rs, {k: best[k] for k in sorted(best, key=lambda k: (algo_key(k[0]), k[1]))}


def save(fig, out, name):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        p = out / f"{name}.{ext}"
        fig.savefig(p, dpi=120, bbox_inches="tight")
        paths.append(p)
    plt.close(fig)
    return paths


def cli(description, default_name):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("results", help="results folder (experiments/sweep.py output or any folder of results JSON)")
    ap.add_argument("--out", help="figure folder (default RESULTS/figures)")
    ap.add_argument("--name", default=default_name, help="file name without extension")
    ap.add_argument("--data-out", help="also write the plotted numbers as JSON")
    a = ap.parse_args()
    a.out = a.out or str(Path(a.results) / "figures")
    return a


def finish(a, data, paths):
    if a.data_out:
        Path(a.data_out).write_text(json.dumps(data, indent=1))
    if paths:
        print("wrote " + ", ".join(str(p) for p in paths))
    else:
        print(f"{a.name}: nothing to plot in {a.results}", file=sys.stderr)

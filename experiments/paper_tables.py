#!/usr/bin/env python3
"""The papers' tables at their rank counts, by simulation (gcnlab simulate / info).

  CAGNET Sec. IV   per-rank volume vs P for 1d, 1.5d, 2d, split-3d (4 ... 1024 ranks)
  SA Table 2       sa-1d with METIS: received rows' bytes max/mean and nnz imbalance vs P
  Plexus Table 3   nnz max/mean over K x K adjacency shards: original, single, double
                   (uniform, the paper's) and their balanced variants, K = 8 ... 32

Everything is computed by the strategies' own setup and model code on one
process (no MPI ranks): the numbers are the ones a run at that P would measure.
Writes OUT/*.json (raw), OUT/summary.md (the tables) and OUT/*.png (figures).

usage: /usr/bin/python3 experiments/paper_tables.py [OUT] [--quick]
  DATASET (env): the graph (default R-MAT scale 14, 64 features, 16 classes)
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

plain = FuncFormatter(lambda v, _: f"{v:g}")  # 2, 5, 10 — not 10^1 with unlabelled minor ticks


def log_axes(ax):
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(plain if axis is ax.yaxis else FuncFormatter(lambda v, _: ""))

here = Path(__file__).resolve().parent.parent
gcnlab = os.environ.get("GCNLAB", str(here / "build" / "gcnlab"))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
quick = "--quick" in sys.argv
out = Path(args[0] if args else "results/paper-tables")
out.mkdir(parents=True, exist_ok=True)
dataset = os.environ.get("DATASET", "rmat:scale=14,edge-factor=16,features=64,classes=16,seed=1")
model = ["--layers", "3", "--hidden", "64"]
ranks = [4, 16, 64] if quick else [4, 8, 16, 32, 64, 128, 256, 512, 1024]


def simulate(algo, p, *extra):
    f = out / f"{algo}-p{p}{''.join(extra).replace('-', '')}.json"
    if not f.exists():
        subprocess.run([gcnlab, "simulate", "--algo", algo, "--ranks", str(p), "--dataset", dataset, *model, *extra,
                        "--out", str(f)], check=True, stdout=subprocess.DEVNULL)
    return json.loads(f.read_text())


def per_rank_max(j):  # the busiest rank's bytes per epoch, all categories
    return j["summary"]["wire_bytes_max_rank"]


lines = [f"# The papers' tables by simulation\n\ndataset `{dataset}`, model {' '.join(model)}\n"]

# --- CAGNET: volume vs P --------------------------------------------------------
algos = ["1d", "1.5d", "2d", "split-3d"]
cagnet = {a: {} for a in algos}
lines.append("## CAGNET Sec. IV: max bytes received per rank and epoch (MB)\n")
lines.append("| P | " + " | ".join(algos) + " |")
lines.append("|---" * (len(algos) + 1) + "|")
for p in ranks:
    row = []
    for a in algos:
        j = simulate(a, p)
        cagnet[a][p] = j
        row.append(f"{per_rank_max(j) / 1e6:.2f} ({'x'.join(map(str, j['config']['grid']))})")
    lines.append(f"| {p} | " + " | ".join(row) + " |")
fig, ax = plt.subplots(figsize=(6, 4))
for a in algos:
    ax.plot(ranks, [per_rank_max(cagnet[a][p]) / 1e6 for p in ranks], marker="o", label=a)
ax.set_xscale("log", base=2)
ax.set_yscale("log")
log_axes(ax)
ax.set_xlabel("ranks P")
ax.set_ylabel("max MB received per rank per epoch")
ax.set_title("CAGNET's algorithms: per-rank volume vs P (simulated)")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(out / "cagnet_volume.png", dpi=150)

# --- SA Table 2: METIS send volume and imbalance vs P ---------------------------
sa_ranks = [4, 16, 64] if quick else [4, 8, 16, 32, 64, 128, 256]
lines.append("\n## SA Table 2 pattern: sa-1d with METIS\n")
lines.append("| P | received bytes max/mean | received MB max | nnz max/mean |")
lines.append("|---|---|---|---|")
sa = {}
for p in sa_ranks:
    j = simulate("sa-1d", p, "--partitioner", "metis")
    sa[p] = j
    a2a = j["summary"]["wire_bytes"]["alltoall"]
    lines.append(f"| {p} | {a2a['max'] / a2a['mean']:.2f} | {a2a['max'] / 1e6:.2f} | "
                 f"{j['summary']['nnz_max_over_mean']:.3f} |")
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(sa_ranks, [sa[p]["summary"]["wire_bytes"]["alltoall"]["max"] / sa[p]["summary"]["wire_bytes"]["alltoall"]["mean"]
                   for p in sa_ranks], marker="o", label="received bytes max/mean")
ax.plot(sa_ranks, [sa[p]["summary"]["nnz_max_over_mean"] for p in sa_ranks], marker="s", label="nnz max/mean")
ax.set_xscale("log", base=2)
ax.xaxis.set_major_formatter(plain)
ax.set_xlabel("ranks P")
ax.set_ylabel("max / mean over ranks")
ax.set_title("sa-1d with METIS: imbalance vs P (simulated)")
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(out / "sa_table2.png", dpi=150)

# --- Plexus Table 3: shard balance per permutation ------------------------------
shard_counts = [8, 16] if quick else [8, 16, 32]
lines.append("\n## Plexus Table 3: nnz max/mean over K x K shards of Â\n")
names = ["original", "single", "double", "single-balanced", "double-balanced"]
lines.append("| K | " + " | ".join(names) + " |")
lines.append("|---" * (len(names) + 1) + "|")
table3 = {}
for k in shard_counts:
    text = subprocess.run([gcnlab, "info", "--dataset", dataset, "--shards", f"{k}x{k}"], check=True,
                          capture_output=True, text=True).stdout
    values = dict(re.findall(r"(original|single-balanced|double-balanced|single|double) ([0-9.]+)", text))
    table3[k] = {n: float(values[n]) for n in names}
    lines.append(f"| {k} | " + " | ".join(f"{table3[k][n]:.3f}" for n in names) + " |")
(out / "plexus_table3.json").write_text(json.dumps(table3, indent=1))
fig, ax = plt.subplots(figsize=(6, 4))
for n in names:
    ax.plot(shard_counts, [table3[k][n] for k in shard_counts], marker="o", label=n)
ax.set_xscale("log", base=2)
ax.set_yscale("log")
log_axes(ax)
ax.set_xlabel("K (K x K shards)")
ax.set_ylabel("nnz max / mean")
ax.set_title("Plexus Table 3 by permutation")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out / "plexus_table3.png", dpi=150)

(out / "summary.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
print(f"\nfigures: {out}/cagnet_volume.png, sa_table2.png, plexus_table3.png")

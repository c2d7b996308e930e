#!/usr/bin/python3
"""Peak memory per rank (max over ranks) per algorithm and rank count: backend allocations
(device memory on GPUs) and the whole process's peak resident set."""
import numpy as np

import common
from common import plt


def make(runs, out, name="memory"):
    data, paths = [], []
    for dataset, rs, best in common.best_points_by_dataset(runs):
        bars = []
        for algo, p in best:
            mem = best[(algo, p)]["memory"]
            bars.append({"algo": algo, "ranks": p, "peak_bytes_max": mem["peak_bytes_max"],
                         "host_peak_bytes_max": mem.get("host_peak_bytes_max", 0.0)})
        fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(bars) + 2), 4.2))
        x = np.arange(len(bars))
        ax.bar(x - 0.2, [b["peak_bytes_max"] / common.MIB for b in bars], 0.4, label="backend allocations")
        ax.bar(x + 0.2, [b["host_peak_bytes_max"] / common.MIB for b in bars], 0.4, label="process peak (RSS)")
        ax.set_xticks(x, [f"{b['algo']}\nP={b['ranks']}" for b in bars], rotation=90)
        ax.set_ylabel("peak memory per rank, max over ranks [MiB]")
        ax.set_title(common.title("Memory", rs))
        common.legend_outside(ax)
        paths += common.save(fig, out, f"{name}-{dataset}")
        data.append({"dataset": dataset, "bars": bars})
    return data, paths


if __name__ == "__main__":
    a = common.cli(__doc__, "memory")
    common.finish(a, *make(common.load_runs(a.results), a.out, a.name))

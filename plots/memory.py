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
        # one panel per rank count, its strategies smallest first
        bars.sort(key=lambda b: (b["ranks"], b["peak_bytes_max"], b["algo"]))
        fig, panels = common.rank_panels(bars, rs)
        for ax, p, panel in panels:
            x = np.arange(len(panel))
            ax.bar(x - 0.2, [b["peak_bytes_max"] / common.MIB for b in panel], 0.4, label="backend allocations",
                   color="C0")
            ax.bar(x + 0.2, [b["host_peak_bytes_max"] / common.MIB for b in panel], 0.4,
                   label="process peak (RSS)", color="C1")
            common.algo_ticks(ax, x, panel)
            ax.set_ylabel("MiB per rank, max over ranks")
        common.panel_legend(fig, panels)
        fig.suptitle(common.title("Peak memory per rank, one panel per rank count, smallest first", rs))
        fig.tight_layout()
        paths += common.save(fig, out, f"{name}-{dataset}")
        data.append({"dataset": dataset, "bars": bars})
    return data, paths


if __name__ == "__main__":
    a = common.cli(__doc__, "memory")
    common.finish(a, *make(common.load_runs(a.results), a.out, a.name))

#!/usr/bin/python3
"""Stacked per-category epoch time per algorithm and rank count (CAGNET Fig. 1-3, Plexus Fig. 9),
one panel per rank count with its strategies sorted by epoch time (fastest first).

Each bar is the slowest rank of the run's best grid: its per-category time per
epoch (averaged over the timed epochs; "other" = the rest of its epoch), so a
bar's height is that rank's epoch time in the results JSON. Communication
categories are the exposed time; nonblocking communication that computation
hid (mggcn-1d, plexus-3d --agg-blocks: the results' hidden_time_s) is drawn as
an outlined box above the bar, outside the epoch time.
"""
import numpy as np

import common
from common import plt


def bars_of(best):
    """One bar per (algo, P): the slowest rank's per-category seconds per epoch."""
    bars = []
    for algo, p in best:
        run = best[(algo, p)]
        slow = max(run["per_rank"], key=lambda pr: sum(pr["time_s"].values()))
        seg = {c: slow["time_s"].get(c, 0.0) for c in common.CATEGORIES}
        hidden = sum(slow.get("hidden_time_s", {}).get(c, 0.0) for c in common.COMMUNICATION)
        bars.append({"algo": algo, "ranks": p, "grid": run["config"]["grid"], "rank": slow["rank"],
                     "segments_s": seg, "total_s": sum(seg.values()), "hidden_s": hidden,
                     "file": run["_file"]})
    # one panel per rank count, its strategies fastest first
    return sorted(bars, key=lambda b: (b["ranks"], b["total_s"], b["algo"]))


def make(runs, out, name="breakdown"):
    data, paths = [], []
    for dataset, rs, best in common.best_points_by_dataset(runs):
        bars = bars_of(best)
        used = [c for c in common.CATEGORIES if any(b["segments_s"][c] > 0 for b in bars)]
        colour = {c: plt.get_cmap("tab20")(i % 20) for i, c in enumerate(used)}
        fig, panels = common.rank_panels(bars, rs)
        for ax, p, panel in panels:
            x = np.arange(len(panel))
            bottom = np.zeros(len(panel))
            for c in used:
                h = np.array([b["segments_s"][c] * 1e3 for b in panel])
                ax.bar(x, h, bottom=bottom, label=c, color=colour[c],
                       hatch="//" if c in common.COMMUNICATION else None, edgecolor="white", linewidth=0.3)
                bottom += h
            hidden = np.array([b["hidden_s"] * 1e3 for b in panel])
            if hidden.any():
                ax.bar(x, hidden, bottom=bottom, fill=False, edgecolor="0.3", linestyle="--", linewidth=0.8,
                       label="communication hidden\nby compute (not in\nthe epoch time)")
            common.algo_ticks(ax, x, panel)
            ax.set_ylabel("ms per epoch, slowest rank")
            ax.margins(y=0.08)
        common.panel_legend(fig, panels, title="hatched: communication")
        fig.suptitle(common.title("Epoch time by category, one panel per rank count, fastest first", rs))
        fig.tight_layout()
        paths += common.save(fig, out, f"{name}-{dataset}")
        data.append({"dataset": dataset, "bars": bars})
    return data, paths


if __name__ == "__main__":
    a = common.cli(__doc__, "breakdown")
    common.finish(a, *make(common.load_runs(a.results), a.out, a.name))

#!/usr/bin/python3
"""Strong scaling: epoch time vs ranks, log-log, one line per algorithm, ideal scaling from serial (SA Fig. 3, Plexus Fig. 10).

Each point is the median over repetitions of the fastest grid at that rank
count; its error bar spans their minimum and maximum.
"""
import common
from common import plt


def make(runs, out, name="scaling"):
    data, paths = [], []
    for dataset, rs in common.by_dataset(runs).items():
        best = common.best_per_point(rs)
        spread = common.spread_per_point(rs)
        algos = sorted({a for a, _ in best}, key=common.algo_key)
        if not best:
            continue
        fig, ax = plt.subplots(figsize=(4.6, 3.2))
        lines = {}
        for algo in algos:
            pts = sorted((p, common.epoch_time(best[(algo, p)])) for a, p in best if a == algo)
            lines[algo] = [{"ranks": p, "epoch_time_s": t, "min_s": spread[(algo, p)][0], "max_s": spread[(algo, p)][1]}
                           for p, t in pts]
            ys = [t * 1e3 for _, t in pts]
            err = [[y - spread[(algo, p)][0] * 1e3 for (p, _), y in zip(pts, ys)],
                   [spread[(algo, p)][1] * 1e3 - y for (p, _), y in zip(pts, ys)]]
            colour, marker = common.algo_style(algo)
            ax.errorbar([p for p, _ in pts], ys, yerr=err, marker=marker, color=colour, markersize=4, capsize=2,
                        linewidth=1, label=algo)
        ps = sorted({p for _, p in best})
        ref = best.get(("serial", 1))
        if ref:
            t1 = common.epoch_time(ref)
            ax.plot(ps, [t1 * 1e3 / p for p in ps], "k--", linewidth=1, label="ideal (serial / P)")
        common.rank_axis(ax, ps)
        common.log_axis_labels(ax)
        ax.set_xlabel(common.rank_label(rs))
        ax.set_ylabel("epoch time [ms] (min-max over repetitions)")
        ax.set_title(common.title("Strong scaling", rs))
        common.legend_outside(ax)
        ax.grid(True, which="major", alpha=0.3)
        paths += common.save(fig, out, f"{name}-{dataset}")
        data.append({"dataset": dataset, "lines": lines})
    return data, paths


if __name__ == "__main__":
    a = common.cli(__doc__, "scaling")
    common.finish(a, *make(common.load_runs(a.results), a.out, a.name))

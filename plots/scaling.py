#!/usr/bin/python3
"""Strong scaling: epoch time vs ranks, log-log, one line per algorithm, ideal scaling from serial (SA Fig. 3, Plexus Fig. 10)."""
import common
from common import plt


def make(runs, out, name="scaling"):
    data, paths = [], []
    for dataset, rs in common.by_dataset(runs).items():
        best = common.best_per_point(rs)
        algos = sorted({a for a, _ in best}, key=common.algo_key)
        if not best:
            continue
        fig, ax = plt.subplots(figsize=(6.5, 4.5))
        lines = {}
        for algo in algos:
            pts = sorted((p, common.epoch_time(best[(algo, p)])) for a, p in best if a == algo)
            lines[algo] = [{"ranks": p, "epoch_time_s": t} for p, t in pts]
            ax.plot([p for p, _ in pts], [t * 1e3 for _, t in pts], marker="o", label=algo)
        ps = sorted({p for _, p in best})
        ref = best.get(("serial", 1))
        if ref:
            t1 = common.epoch_time(ref)
            ax.plot(ps, [t1 * 1e3 / p for p in ps], "k--", linewidth=1, label="ideal (serial / P)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(ps, [str(p) for p in ps])
        ax.set_xlabel("ranks (GPUs) P")
        ax.set_ylabel("epoch time [ms]")
        ax.set_title(common.title("Strong scaling", rs), fontsize=9)
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        paths += common.save(fig, out, f"{name}-{dataset}")
        data.append({"dataset": dataset, "lines": lines})
    return data, paths


if __name__ == "__main__":
    a = common.cli(__doc__, "scaling")
    common.finish(a, *make(common.load_runs(a.results), a.out, a.name))

#!/usr/bin/python3
"""Communication volume per rank and epoch vs ranks, measured (markers) and each strategy's model (lines).

One legend entry per algorithm (its colour and marker) plus one for each of
the two styles; markers differ by algorithm so that coinciding lines stay visible.

Volume = wire bytes received by the busiest rank per epoch, summed over the
communication categories; the model is the same sum of model_wire_bytes.
"""
import common
from common import plt


def volumes(run):
    meas = max(sum(pr["wire_bytes"].get(c, 0.0) for c in common.COMMUNICATION) for pr in run["per_rank"])
    model = max(sum(pr["model_wire_bytes"].get(c, 0.0) for c in common.COMMUNICATION) for pr in run["per_rank"])
    return meas, model


def make(runs, out, name="volume"):
    data, paths = [], []
    for dataset, rs in common.by_dataset(runs).items():
        best = common.best_per_point(rs)
        algos = sorted({a for a, _ in best}, key=common.algo_key)
        fig, ax = plt.subplots(figsize=(4.6, 3.2))
        series = {}
        for algo in algos:
            pts = sorted((p, *volumes(best[(algo, p)])) for a, p in best if a == algo)
            series[algo] = [{"ranks": p, "measured_bytes": m, "model_bytes": mo} for p, m, mo in pts]
            color, marker = common.algo_style(algo)
            ax.plot([p for p, _, _ in pts], [mo / common.MIB for _, _, mo in pts], "-", color=color, linewidth=1,
                    marker=marker, markersize=6, markerfacecolor="none", label=algo)
            ax.plot([p for p, _, _ in pts], [m / common.MIB for _, m, _ in pts], linestyle="none", color=color,
                    marker=marker, markersize=2.5)
        ax.plot([], [], "k-", marker="o", markerfacecolor="none", label="model (line, open)")
        ax.plot([], [], "k", linestyle="none", marker="o", markersize=2.5, label="measured (dot)")
        ps = sorted({p for _, p in best})
        if ps:
            common.rank_axis(ax, ps)
        ax.set_xlabel(common.rank_label(rs))
        ax.set_ylabel("received per rank and epoch,\nmax over ranks [MiB]")
        ax.set_title(common.title("Communication volume", rs))
        common.legend_outside(ax)
        ax.grid(True, alpha=0.3)
        paths += common.save(fig, out, f"{name}-{dataset}")
        data.append({"dataset": dataset, "series": series})
    return data, paths


if __name__ == "__main__":
    a = common.cli(__doc__, "volume")
    common.finish(a, *make(common.load_runs(a.results), a.out, a.name))

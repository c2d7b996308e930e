#!/usr/bin/python3
"""Load balance: nonzeros of Â stored per rank (Plexus Table 3, SA Table 2).

One panel per algorithm at its largest rank count: a heatmap over the first
two grid axes for 2D/3D grids (3D: summed over the third), bars for 1D; the
max/mean ratio in each panel's title. Every panel shows nnz / mean on one
colour scale (at least 0.9 to 1.1), so a 1.001 imbalance looks like one.
"""
import numpy as np

import common
from common import plt


def make(runs, out, name="balance"):
    data, paths = [], []
    for dataset, rs in common.by_dataset(runs).items():
        chosen = {}
        for r in rs:
            c = r["config"]
            if c["algo"] != "serial" and (c["algo"] not in chosen or c["ranks"] > chosen[c["algo"]]["config"]["ranks"]):
                chosen[c["algo"]] = r
        if not chosen:
            continue
        algos = sorted(chosen, key=common.algo_key)
        cols = min(4, len(algos))
        rows = (len(algos) + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(2.4 * cols, 2.4 * rows), squeeze=False,
                                 constrained_layout=True)
        panels = {}
        # one colour scale for every panel: nnz over the panel's mean, at least 0.9 .. 1.1
        cells = {}
        for algo in algos:
            r = chosen[algo]
            grid = r["config"]["grid"]
            mean = sum(pr["nnz_local"] for pr in r["per_rank"]) / len(r["per_rank"]) or 1.0
            if len(grid) >= 2 and grid[0] > 1 and grid[1] > 1:
                m = np.zeros((grid[0], grid[1]))
                for pr in r["per_rank"]:
                    m[pr["coords"][0], pr["coords"][1]] += pr["nnz_local"]
                cells[algo] = m / (mean * len(r["per_rank"]) / m.size)  # a cell sums the third axis
            else:
                cells[algo] = np.array([[pr["nnz_local"] / mean for pr in r["per_rank"]]])
        vmin = min(0.9, min(c.min() for c in cells.values()))
        vmax = max(1.1, max(c.max() for c in cells.values()))
        im = None
        for ax, algo in zip(axes.flat, algos):
            r = chosen[algo]
            grid = r["config"]["grid"]
            nnz = [pr["nnz_local"] for pr in r["per_rank"]]
            ratio = max(nnz) / (sum(nnz) / len(nnz)) if sum(nnz) else 1.0
            panels[algo] = {"grid": grid, "nnz": nnz, "max_over_mean": ratio, "file": r["_file"],
                            "vmin": vmin, "vmax": vmax}
            m = cells[algo]
            im = ax.imshow(m, cmap="RdBu_r", vmin=vmin, vmax=vmax, aspect="auto" if m.shape[0] == 1 else "equal")
            ax.set_xticks(range(m.shape[1]), [str(k) for k in range(m.shape[1])])
            ax.set_yticks(range(m.shape[0]), [str(k) for k in range(m.shape[0])] if m.shape[0] > 1 else [""])
            if m.shape[0] > 1:
                ax.set_xlabel(f"grid axis 1 (of {'x'.join(map(str, grid))})")
                ax.set_ylabel("grid axis 0")
            else:
                ax.set_xlabel("rank")
            ax.set_title(f"{algo} P={r['config']['ranks']}: max/mean {ratio:.3f}")
        if im is not None:
            fig.colorbar(im, ax=list(axes.flat), fraction=0.03, label="nnz / mean")
        for ax in list(axes.flat)[len(algos):]:
            ax.axis("off")
        fig.suptitle(common.title("Nonzeros per rank", rs))
        paths += common.save(fig, out, f"{name}-{dataset}")
        data.append({"dataset": dataset, "panels": panels})
    return data, paths


if __name__ == "__main__":
    a = common.cli(__doc__, "balance")
    common.finish(a, *make(common.load_runs(a.results), a.out, a.name))

#!/usr/bin/python3
"""Loss and test accuracy per epoch of every algorithm (at its largest rank count) overlaid on serial (Plexus Fig. 7)."""
import common
from common import plt


def make(runs, out, name="loss"):
    data, paths = [], []
    for dataset, rs in common.by_dataset(runs).items():
        chosen = {}
        for r in rs:
            c = r["config"]
            key = c["algo"]
            if key not in chosen or (c["ranks"], -c["seed"]) > (chosen[key]["config"]["ranks"], -chosen[key]["config"]["seed"]):
                chosen[key] = r
        if not chosen:
            continue
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
        curves = {}
        for algo in sorted(chosen, key=common.algo_key):
            r = chosen[algo]
            ep = [e["epoch"] for e in r["epochs"]]
            loss = [e["loss"] for e in r["epochs"]]
            acc = [e["test_acc"] for e in r["epochs"]]
            serial = algo == "serial"
            style = dict(color="black", linewidth=3, alpha=0.5, zorder=0) if serial else dict(linewidth=1)
            lbl = f"{algo} (P={r['config']['ranks']})"
            ax1.plot(ep, loss, label=lbl, **style)
            ax2.plot(ep, [100 * a for a in acc], label=lbl, **style)
            curves[algo] = {"ranks": r["config"]["ranks"], "loss": loss, "test_acc": acc, "file": r["_file"]}
        ax1.set_xlabel("epoch")
        ax1.set_ylabel("training loss")
        ax2.set_xlabel("epoch")
        ax2.set_ylabel("test accuracy [%]")
        ax1.legend(fontsize=7)
        fig.suptitle(common.title("Training curves vs serial", rs), fontsize=9)
        paths += common.save(fig, out, f"{name}-{dataset}")
        data.append({"dataset": dataset, "curves": curves})
    return data, paths


if __name__ == "__main__":
    a = common.cli(__doc__, "loss")
    common.finish(a, *make(common.load_runs(a.results), a.out, a.name))

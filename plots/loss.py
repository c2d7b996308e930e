#!/usr/bin/python3
"""Loss and test accuracy per epoch of every algorithm (at its largest rank count) overlaid on serial (Plexus Fig. 7).

The middle panel carries the information the overlay cannot: each run's
relative difference from serial's loss, |loss - serial| / serial, per epoch
(log scale; rounding-level differences are ~1e-7).

A run that was stopped and resumed (a scheduler's requeue) is drawn whole: its
results hold every epoch of every segment. Where a segment began, a dotted line
in the run's colour marks the resume, labelled with the strategy and rank count
it continued on.
"""
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
        fig, (ax1, ax3, ax2) = plt.subplots(1, 3, figsize=(9.5, 3.0), constrained_layout=True)
        curves = {}
        serial_loss = [e["loss"] for e in chosen["serial"]["epochs"]] if "serial" in chosen else None
        for algo in sorted(chosen, key=common.algo_key):
            r = chosen[algo]
            ep = [e["epoch"] for e in r["epochs"]]
            loss = [e["loss"] for e in r["epochs"]]
            acc = [e["test_acc"] for e in r["epochs"]]
            serial = algo == "serial"
            style = dict(color="black", linewidth=3, alpha=0.5, zorder=0) if serial else \
                dict(linewidth=1, color=common.algo_style(algo)[0])
            lbl = f"{algo} (P={r['config']['ranks']})"
            line, = ax1.plot(ep, loss, label=lbl, **style)
            ax2.plot(ep, [100 * a for a in acc], label=lbl, **style)
            curves[algo] = {"ranks": r["config"]["ranks"], "loss": loss, "test_acc": acc, "file": r["_file"]}
            resumes = [s for s in r.get("segments", []) if s["first_epoch"] > 0]
            for s in resumes:
                ax1.axvline(s["first_epoch"], color=line.get_color(), linestyle=":", linewidth=1)
                ax1.annotate(f"resumed: {s['algo']} P={s['ranks']}", (s["first_epoch"], 1), xycoords=("data", "axes fraction"),
                             rotation=90, va="top", ha="right", fontsize=6, color=line.get_color())
            if resumes:
                curves[algo]["resumed_at"] = [s["first_epoch"] for s in resumes]
            if serial_loss and not serial and len(loss) == len(serial_loss):
                diff = [abs(a - b) / abs(b) if b else abs(a - b) for a, b in zip(loss, serial_loss)]
                curves[algo]["rel_diff_from_serial"] = diff
                ax3.plot(ep, [max(d, 1e-12) for d in diff], label=lbl, linewidth=1, color=style["color"])
        ax1.set_xlabel("epoch")
        ax1.set_ylabel("training loss")
        ax2.set_xlabel("epoch")
        ax2.set_ylabel("test accuracy [%]")
        for ax in (ax1, ax3, ax2):
            ax.xaxis.set_major_locator(common.MaxNLocator(integer=True))
        ax3.set_yscale("log")
        ax3.set_xlabel("epoch")
        ax3.set_ylabel("|loss - serial| / serial (floor 1e-12)")
        common.legend_outside(ax2)
        fig.suptitle(common.title("Training curves vs serial", rs))
        paths += common.save(fig, out, f"{name}-{dataset}")
        data.append({"dataset": dataset, "curves": curves})
    return data, paths


if __name__ == "__main__":
    a = common.cli(__doc__, "loss")
    common.finish(a, *make(common.load_runs(a.results), a.out, a.name))

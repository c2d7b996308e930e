#!/usr/bin/python3
"""Predicted vs measured epoch time (Plexus Fig. 5) from `gcnlab plan --validate --out FILE` results
(schema gcnlab.plan-validation/1) found in the results folder; identity line and Spearman in the title."""
import json
from pathlib import Path

import common
from common import plt


def validations(folder):
    out = []
    for f in sorted(Path(folder).rglob("*.json")):
        try:
            j = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(j, dict) and j.get("schema") == "gcnlab.plan-validation/1":
            j["_file"] = str(f)
            out.append(j)
    return out


def make(folder, out, name="predicted", runs=None):
    data, paths = [], []
    for k, v in enumerate(validations(folder)):
        pts = v["points"]
        fig, ax = plt.subplots(figsize=(5, 5))
        pred = [p["predicted_s"] * 1e3 for p in pts]
        meas = [p["measured_s"] * 1e3 for p in pts]
        ax.scatter(pred, meas)
        for p, x, y in zip(pts, pred, meas):
            ax.annotate("x".join(map(str, p["grid"])), (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
        lo, hi = min(pred + meas) * 0.9, max(pred + meas) * 1.1
        ax.plot([lo, hi], [lo, hi], "k--", linewidth=1, label="identity")
        ax.set_xlabel("predicted epoch time [ms]")
        ax.set_ylabel("measured epoch time [ms]")
        m = common.machine(runs) if runs else v["machine"]
        ax.set_title(f"Predicted vs measured (machine profile {v['machine']}), Spearman {v['spearman']:.2f}\n{m}",
                     fontsize=8)
        ax.legend(fontsize=8)
        paths += common.save(fig, out, f"{name}-{k}")
        data.append({"file": v["_file"], "spearman": v["spearman"], "predicted_ms": pred, "measured_ms": meas})
    return data, paths


if __name__ == "__main__":
    a = common.cli(__doc__, "predicted")
    common.finish(a, *make(a.results, a.out, a.name, common.load_runs(a.results)))

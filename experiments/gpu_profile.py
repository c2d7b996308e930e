#!/usr/bin/env python3
"""A machine profile for `gcnlab plan` from a GPU session's `bench epoch` lines (experiments/gpu_check.sh).

The device runs of experiments/gpu-results/<date>-<gpu>/epoch-rmat<S>.txt give, per R-MAT scale, the
serial epoch's time per breakdown category (bench=epoch-category, averaged over the session's runs).
The work behind each category is traced here, on the CPU, by `gcnlab simulate` of the same run (the
kernels' work does not depend on the backend: tests/gpu compares the CUDA backend's kernels with the
CPU's). Each scale becomes a one-rank observation, and `gcnlab plan --calibrate` fits a rate and a
per-call latency per kernel kind (NNLS) on top of a base profile of the device's datasheet, which
prices the kinds those runs do not exercise and the links (one GPU: no bandwidth is measured).

usage: experiments/gpu_profile.py RESULTS_DIR BASE.json OUT.json [--gcnlab build/gcnlab] [--scales 20,22]
(each scale's trace holds its graph here: R-MAT 22's takes ~80 s and 11 GB)
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile


def bench_lines(path):
    """Per category, the mean of its mean_ms over the session's bench epoch runs; the median epoch too."""
    times, epochs, info = collections.defaultdict(list), [], {}
    for line in open(path):
        fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if fields.get("bench") == "epoch-category" and fields.get("backend"):
            times[fields["category"]].append(float(fields["mean_ms"]) / 1e3)
        elif fields.get("bench") == "epoch" and fields.get("backend"):
            epochs.append(float(fields["median_ms"]) / 1e3)
            info = fields
    if not epochs:
        sys.exit(f"{path}: no bench=epoch line of gcnlab")
    return {c: sum(v) / len(v) for c, v in times.items()}, sorted(epochs)[len(epochs) // 2], info


def traced(gcnlab, scale, info, out):
    dims = info["dims"].split("-")
    spec = f"rmat:scale={scale},edge-factor=16,features={dims[0]},classes={dims[-1]},seed=1"
    subprocess.run([gcnlab, "simulate", "--algo", info.get("algo", "serial"), "--ranks", "1", "--dataset", spec,
                    "--layers", str(len(dims) - 1), "--hidden", dims[1], "--dropout", info.get("dropout", "0"),
                    "--out", out], check=True, stdout=subprocess.DEVNULL)
    sim = json.load(open(out))
    return sim, spec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("base")
    ap.add_argument("out")
    ap.add_argument("--gcnlab", default=os.path.join(os.path.dirname(__file__), "..", "build", "gcnlab"))
    ap.add_argument("--name", default="h200")
    ap.add_argument("--scales", default="", help="the R-MAT scales to use (default: every epoch-rmat<S>.txt)")
    a = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in sorted(os.listdir(a.results)):
            m = re.fullmatch(r"epoch-rmat(\d+)\.txt", f)
            if not m or (a.scales and m.group(1) not in a.scales.split(",")):
                continue
            per_category, epoch, info = bench_lines(os.path.join(a.results, f))
            sim, spec = traced(a.gcnlab, int(m.group(1)), info, os.path.join(tmp, f"sim{m.group(1)}.json"))
            rank = sim["ranks"][0]
            assert int(info["nnz"]) == rank["nnz_local"] - int(info["n"]), (info["nnz"], rank["nnz_local"])
            run = {"schema": "gcnlab.run/1",
                   "config": {"algo": info.get("algo", "serial"), "minibatch": None, "grid": sim["config"]["grid"],
                              "threads": int(info["threads"]),
                              "model": {"variant": "gcn", "dims": sim["config"]["dims"],
                                        "layers": len(sim["config"]["dims"]) - 1}},
                   "dataset": {"spec": spec, "nodes": int(info["n"]), "nnz": int(info["nnz"])},
                   "breakdown": {c: {"time_max_s": t} for c, t in per_category.items()},
                   "summary": {"epoch_time_s": epoch},
                   "provenance": {"ranks_per_node": 1, "cores_per_node": 0, "source": os.path.join(a.results, f)},
                   "per_rank": [{"nnz_local": rank["nnz_local"], "time_s": per_category,
                                 "model_wire_bytes": rank["model_wire_bytes"], "work": rank["work"]}]}
            path = os.path.join(tmp, f"run-rmat{m.group(1)}.json")
            json.dump(run, open(path, "w"))
            runs.append(path)
        if not runs:
            sys.exit(f"{a.results}: no epoch-rmat<S>.txt")
        subprocess.run([a.gcnlab, "plan", "--calibrate", *runs, "--machine", a.base, "--name", a.name,
                        "--out", a.out], check=True)


if __name__ == "__main__":
    main()

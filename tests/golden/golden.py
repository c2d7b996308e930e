#!/usr/bin/python3
"""The golden results: a fixed set of short runs whose numbers a refactor must not move (issue 45).

Every registered strategy at 4 ranks on its default grid (serial on 1), a second grid for the strategies
on grids of two or more axes, every other model (`gcnlab models --json`: scalegnn, sage) where a strategy runs it, a directed graph, and mini-batch
runs; each run 3 epochs with dropout on, one thread per rank, OpenBLAS's GEMM with its Haswell kernels
(GCNLAB_CPU_GEMM=openblas: the file predates oneDNN's, the default; backends/cpu/sgemm.hpp). Stored in
tests/golden/runs.json per run:
  - every epoch's loss, bit for bit (JSON keeps a double exactly);
  - each rank's wire bytes per communication category per epoch (the breakdown's average over the timed
    epochs), and its setup bytes;
  - each rank's analytic memory need by part (graph, buffers, activations, weights).
Bytes and memory compare exactly everywhere. Losses compare bit for bit when the runs' `signature` (the
machine, the compiler and the BLAS kernels: what decides the bits) is the stored one, on any x86-64 host
with AVX2 and FMA and at any -march of the kernels' layers (issue 61; ctest golden_portable runs a build at
x86-64-v2 against the same file), else within 1e-5 relative, and the test says which.

    tests/golden/golden.py --gcnlab build/gcnlab [--mpiexec mpiexec]          # compare (ctest -R 'golden$')
    (cd build && GCNLAB_GOLDEN_UPDATE=1 ctest -R 'golden$')                    # an intended change: rewrite

A change that moves a number fails with the run, the field and both values; a commit that regenerates the
file names the command and says what moved and why.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
STORED = HERE / "runs.json"
UNDIRECTED = "sbm:nodes=600,classes=4,avg-degree=8,features=16,seed=3"
DIRECTED = "sbm:nodes=600,classes=4,avg-degree=8,features=16,seed=3,directed=1"
COMMON = ["--epochs", "3", "--hidden", "16", "--layers", "3", "--dropout", "0.5", "--seed", "5", "--threads", "1",
          "--weight-decay", "5e-4"]
ENV = {"GCNLAB_CPU_GEMM": "openblas", "OPENBLAS_CORETYPE": "Haswell", "OMP_NUM_THREADS": "1",
       "OPENBLAS_NUM_THREADS": "1"}
# A second grid at 4 ranks for the strategies on grids of 2 or more axes (their default is the squarest).
SECOND_GRID = {2: "4x1", 3: "1x2x2", 4: "2x1x2x1"}
LOSS_TOLERANCE = 1e-5  # another build: the equivalence contract's order of magnitude


def registry(gcnlab):
    out = subprocess.run([gcnlab, "strategies", "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["strategies"]


def model_registry(gcnlab):
    out = subprocess.run([gcnlab, "models", "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["models"]


def runs(strategies, models):
    """The fixed set: (label, ranks, arguments)."""
    out = []
    for s in strategies:
        name, caps, axes = s["name"], s["capabilities"], s["grid_axes"]
        ranks = 4 if s["distributed"] else 1
        base = ["--algo", name]
        if not caps["full_graph"]:  # mini-batch only (scalegnn-4d): its D = 2 data-parallel groups
            out.append((f"{name}/minibatch", ranks, base + ["--dataset", UNDIRECTED, "--batch-size", "200",
                                                            "--model", "scalegnn", "--grid", "2x1x2x1"]))
            out.append((f"{name}/minibatch-gcn-1x2x2x1", ranks, base + ["--dataset", UNDIRECTED, "--batch-size",
                                                                        "150", "--grid", "1x2x2x1"]))
            continue
        out.append((f"{name}/default", ranks, base + ["--dataset", UNDIRECTED]))
        if axes >= 2:
            out.append((f"{name}/grid-{SECOND_GRID[axes]}", ranks,
                        base + ["--dataset", UNDIRECTED, "--grid", SECOND_GRID[axes]]))
        for m in models:  # every other model the strategy runs (gcnlab models --json)
            if m["name"] == "gcn" or name not in m["strategies"]:
                continue
            extra = ["--permutation", "none"] if caps["permutations"] else []  # residuals, root terms: one ordering
            out.append((f"{name}/{m['name']}", ranks, base + ["--dataset", UNDIRECTED, "--model", m["name"]] + extra))
        if name in ("serial", "1d", "2d", "plexus-3d"):
            out.append((f"{name}/directed", ranks, base + ["--dataset", DIRECTED]))
        if caps["minibatch"]:
            out.append((f"{name}/minibatch", ranks, base + ["--dataset", UNDIRECTED, "--batch-size", "200"]))
    return out


def signature(results):
    """What the bits of a loss depend on besides the code, read from a run's results (provenance.versions):
    the machine, the compiler that built gcnlab, the GEMM library (versions.gemm's first word; a build before
    it reports none: "?") and the BLAS kernels (GCNLAB_CPU_GEMM and OPENBLAS_CORETYPE, pinned in ENV). Not
    the CPU's vendor or ISA, nor the -march of the kernels' layers (GCNLAB_ARCH), nor the build type: every CPU
    kernel sums in one fixed order and nothing is contracted into an FMA (docs/design.md, reproducibility;
    golden_portable checks an x86-64-v2 build against this file)."""
    versions = results["provenance"]["versions"]
    return {"machine": platform.machine(), "compiler": versions.get("compiler", "?"),
            "cpu_gemm": versions.get("gemm", "?").split(" ")[0], "blas": versions.get("blas", "?"),
            "openblas_coretype": ENV["OPENBLAS_CORETYPE"]}


def measure(gcnlab, mpiexec, label, ranks, args, work):
    out = Path(work) / (label.replace("/", "_") + ".json")
    cmd = [mpiexec, "-np", str(ranks), gcnlab, "train", *args, *COMMON, "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **ENV})
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if "gcnlab: error" in l] or proc.stderr.splitlines()[-3:]
        raise SystemExit(f"golden: {label}: {' '.join(cmd)} failed: {' | '.join(lines)}")
    r = json.loads(out.read_text())
    per_rank = sorted(r["per_rank"], key=lambda p: p["rank"])
    nonzero = lambda d: {k: v for k, v in sorted(d.items()) if v}
    record = {"ranks": ranks,
            "args": args,
            "losses": [e["loss"] for e in r["epochs"]],
            "wire_bytes": [nonzero(p["wire_bytes"]) for p in per_rank],
            "setup_wire_bytes": [nonzero(p["setup_wire_bytes"]) for p in per_rank],
            "memory_need": [p["memory_need"] for p in per_rank]}
    return record, json.dumps(signature(r), sort_keys=True)


def compare(label, want, got, exact_losses):
    """The differences of one run, as lines."""
    diffs = []
    if want["args"] != got["args"] or want["ranks"] != got["ranks"]:
        return [f"{label}: the stored run has other arguments ({want['ranks']} ranks, {want['args']}): regenerate"]
    for field in ("wire_bytes", "setup_wire_bytes", "memory_need"):
        for rank, (w, g) in enumerate(zip(want[field], got[field])):
            if w != g:
                keys = sorted(set(w) | set(g))
                moved = ", ".join(f"{k} {w.get(k, 0)} -> {g.get(k, 0)}" for k in keys if w.get(k) != g.get(k))
                diffs.append(f"{label}: rank {rank} {field}: {moved}")
    if len(want["losses"]) != len(got["losses"]):
        diffs.append(f"{label}: {len(got['losses'])} epochs, {len(want['losses'])} stored")
    for e, (w, g) in enumerate(zip(want["losses"], got["losses"])):
        off = abs(g - w) / abs(w) if w else abs(g - w)
        if (g != w) if exact_losses else (off > LOSS_TOLERANCE):
            diffs.append(f"{label}: epoch {e} loss {w!r} -> {g!r} (relative {off:.3g})")
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gcnlab", default=os.environ.get("GCNLAB", "build/gcnlab"))
    ap.add_argument("--mpiexec", default=os.environ.get("MPIEXEC", "mpiexec"))
    ap.add_argument("--update", action="store_true", default=bool(os.environ.get("GCNLAB_GOLDEN_UPDATE")),
                    help="rewrite tests/golden/runs.json from this build (also GCNLAB_GOLDEN_UPDATE=1)")
    a = ap.parse_args()
    todo = runs(registry(a.gcnlab), model_registry(a.gcnlab))
    with tempfile.TemporaryDirectory() as work:
        measured = {label: measure(a.gcnlab, a.mpiexec, label, ranks, args, work) for label, ranks, args in todo}
    got = {label: record for label, (record, _) in measured.items()}
    signatures = {sig for _, sig in measured.values()}  # one, or the runs were not made alike
    if len(signatures) != 1:
        raise SystemExit(f"golden: the runs report {len(signatures)} signatures: {sorted(signatures)}")
    env_sig = json.loads(next(iter(signatures)))
    if a.update:
        STORED.write_text(json.dumps({"signature": env_sig, "runs": got}, indent=1) + "\n")
        print(f"golden: wrote {len(got)} runs to {STORED}")
        return 0
    stored = json.loads(STORED.read_text())
    exact = stored["signature"] == env_sig
    diffs = []
    for label in sorted(set(stored["runs"]) | set(got)):
        if label not in got:
            diffs.append(f"{label}: stored, no longer in the set (a strategy or capability changed): regenerate")
        elif label not in stored["runs"]:
            diffs.append(f"{label}: new in the set (a strategy or capability was added): regenerate")
        else:
            diffs += compare(label, stored["runs"][label], got[label], exact)
    how = "bit for bit" if exact else (f"within {LOSS_TOLERANCE} relative: this build is not the one that wrote "
                                       f"the file ({env_sig} vs {stored['signature']})")
    for d in diffs[:40]:
        print(f"FAIL: {d}")
    if diffs:
        print(f"golden: {len(diffs)} difference(s) in {len(got)} runs (losses {how}; bytes and memory exactly). "
              "An intended change: (cd build && GCNLAB_GOLDEN_UPDATE=1 ctest -R 'golden$'), and say in the commit "
              "what moved")
        return 1
    print(f"golden: {len(got)} runs equal to {STORED.name}: losses {how}, per-rank bytes and memory exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""A GAT training epoch, gcnlab beside PyTorch Geometric 2.3.1's GATConv, interleaved.

Both train the same model on the same graph: L GAT layers (HEADS heads of
HIDDEN concatenated in the hidden layers, one head at the output), ELU between
them, masked softmax cross-entropy over the training vertices, Adam. gcnlab runs
`train --algo serial --model gat` on the prepared file; PyG runs GATConv on its
edge_index (the graph's pattern without the diagonal: GATConv adds the self
loops). Each round times gcnlab's epochs (its results file's median epoch,
evaluation off) and then PyG's (the median of --epochs after one warm-up), and
reports the round's ratio; the summary is the median ratio and its range.
The breakdown of gcnlab's epoch (spmm, sddmm, edge_softmax, gemm, ...) is
printed from the last round's results.

  experiments/bench_gat.py [--dataset SPEC] [--threads T] [--rounds R] [--epochs E]

Needs PyG (experiments/setup_pyg.sh: run it with .venv-pyg/bin/python).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def same_blas_kernels(gcnlab):
    """PyTorch loads OpenBLAS (and OpenBLAS picks its kernels) at `import torch`: before it, ask for the
    kernels gcnlab runs (`gcnlab --version`; backends/cpu/blas_kernels.hpp), so that both sides' GEMMs
    run the same ones, and return them."""
    if not os.environ.get("OPENBLAS_CORETYPE"):
        out = subprocess.run([gcnlab, "--version"], check=True, capture_output=True, text=True).stdout
        kernels = [l.split()[2] for l in out.splitlines() if l.startswith("blas kernels: ")]
        if kernels:
            os.environ["OPENBLAS_CORETYPE"] = kernels[0]
    return os.environ.get("OPENBLAS_CORETYPE", "OpenBLAS's choice")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--gcnlab", default=os.path.join(root, "build", "gcnlab"))
    ap.add_argument("--dataset", default="rmat:scale=16,edge-factor=16,features=128,classes=32,seed=1")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=3, help="timed epochs per round and framework (after one warm-up)")
    args = ap.parse_args()
    blas = same_blas_kernels(args.gcnlab)
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_pytorch import read_gcl  # gcnlab's gcl format
    from torch_geometric.nn import GATConv  # torch_geometric 2.3.1 (experiments/setup_pyg.sh)
    import torch_geometric

    torch.set_num_threads(args.threads)
    work = tempfile.mkdtemp(prefix="bench_gat-")
    gcl = os.path.join(work, "graph.gcl")
    subprocess.run([args.gcnlab, "prepare", "--dataset", args.dataset, "--out", gcl], check=True,
                   stdout=subprocess.DEVNULL)
    head, rowptr, col, x, labels, split = read_gcl(gcl)
    n, feats, classes = head["nodes"], head["features"], head["classes"]
    target = np.repeat(np.arange(n, dtype=np.int64), np.diff(rowptr))
    source = np.asarray(col, dtype=np.int64)
    keep = source != target
    edge_index = torch.from_numpy(np.stack([source[keep], target[keep]]))
    torch.manual_seed(1)
    xt = torch.from_numpy(np.array(x)) if x is not None else torch.rand(n, feats) * 2 - 1
    y = torch.from_numpy(labels.astype(np.int64)).clamp(min=0)
    train = torch.from_numpy(split == 1)
    widths = [feats] + [args.hidden] * (args.layers - 1) + [classes]
    convs = [GATConv(widths[l] * (args.heads if l > 0 else 1), widths[l + 1],
                     heads=args.heads if l + 1 < args.layers else 1, concat=l + 1 < args.layers)
             for l in range(args.layers)]
    opt = torch.optim.Adam([p for c in convs for p in c.parameters()], lr=0.005)

    def pyg_epoch():
        opt.zero_grad()
        h = xt
        for l, c in enumerate(convs):
            h = c(h, edge_index)
            if l + 1 < len(convs):
                h = F.elu(h)
        F.cross_entropy(h[train], y[train]).backward()
        opt.step()

    gcn = [args.gcnlab, "train", "--algo", "serial", "--model", "gat", "--dataset", f"gcl:{gcl}", "--layers",
           str(args.layers), "--hidden", str(args.hidden), "--heads", str(args.heads), "--lr", "0.005",
           "--threads", str(args.threads), "--epochs", str(args.epochs + 1), "--no-eval"]
    print(f"bench=gat graph={head['name']} n={n} edges={int(keep.sum())} threads={args.threads} "
          f"model={args.layers}x{args.heads}x{args.hidden} torch={torch.__version__} pyg={torch_geometric.__version__} "
          f"openblas_kernels={blas}",
          flush=True)
    ratios, ours_all, theirs_all, last = [], [], [], None
    for r in range(args.rounds):
        out = os.path.join(work, f"gcnlab-{r}.json")
        subprocess.run(gcn + ["--out", out], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        last = json.load(open(out))
        ours = statistics.median(e["time_s"] for e in last["epochs"][1:])
        times = []
        for k in range(args.epochs + 1):
            t0 = time.perf_counter()
            pyg_epoch()
            if k > 0:
                times.append(time.perf_counter() - t0)
        theirs = statistics.median(times)
        ratios.append(theirs / ours)
        ours_all.append(ours)
        theirs_all.append(theirs)
        print(f"round={r} gcnlab_ms={ours * 1e3:.1f} pyg_ms={theirs * 1e3:.1f} ratio={theirs / ours:.2f}", flush=True)
    print(f"summary gcnlab_ms={statistics.median(ours_all) * 1e3:.1f} pyg_ms={statistics.median(theirs_all) * 1e3:.1f} "
          f"pyg/gcnlab={statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
    parts = {k: v for k, v in last["breakdown"].items() if isinstance(v, dict) and v.get("time_max_s", 0) > 0}
    print("gcnlab epoch breakdown (ms, last round): " +
          " ".join(f"{k}={v['time_max_s'] * 1e3:.1f}" for k, v in sorted(parts.items(), key=lambda kv: -kv[1]["time_max_s"])))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Graph attention's communication eliding per strategy (issue 46): each strategy that lays out GAT's edge
tensors, simulated with `--elide on` and `--elide off` (gcnlab simulate: the strategy's own setup and its
traced byte model, which the suite checks equal to the measured bytes), as a markdown table of the wire
bytes per rank and epoch (mean over ranks), the saving, and the analytic memory per rank (max).

    experiments/elide_table.py [--gcnlab build/gcnlab] [--ranks 4] [--dataset SPEC] [MODEL FLAGS...]
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def simulate(gcnlab, algo, ranks, dataset, model_flags, elide):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sim.json"
        cmd = [gcnlab, "simulate", "--algo", *algo.split(), "--ranks", str(ranks), "--dataset", dataset,
               "--model", "gat", *model_flags, "--elide", elide, "--out", str(out), "--quiet"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        ranks_ = json.load(open(out))["ranks"]
    wire = [sum(r["model_wire_bytes"].values()) for r in ranks_]
    memory = [r["memory_need"]["total"] for r in ranks_]
    return sum(wire) / len(wire), max(memory)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gcnlab", default="build/gcnlab")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--dataset", default="rmat:scale=14,edge-factor=16,features=128,classes=16,seed=1")
    p.add_argument("--algos", default="1d,1d-ring,sa-1d,sa-1d --partitioner metis,1.5d --replication 2,"
                                      "sa-1.5d --replication 2,sa-1.5d --replication 2 --partitioner metis")
    args, model_flags = p.parse_known_args()
    model_flags = model_flags or ["--layers", "3", "--hidden", "32", "--heads", "4"]
    print(f"{args.dataset}, {args.ranks} ranks, --model gat {' '.join(model_flags)}: wire bytes per rank and epoch "
          "(mean over ranks) and analytic memory per rank (max)\n")
    print("| strategy | MB, --elide on | MB, --elide off | saved | MiB/rank on | MiB/rank off |")
    print("|---|---:|---:|---:|---:|---:|")
    for algo in args.algos.split(","):
        on, mem_on = simulate(args.gcnlab, algo, args.ranks, args.dataset, model_flags, "on")
        off, mem_off = simulate(args.gcnlab, algo, args.ranks, args.dataset, model_flags, "off")
        saved = 100 * (off - on) / off if off else 0
        print(f"| `{algo}` | {on / 1e6:.2f} | {off / 1e6:.2f} | {saved:.1f} % | {mem_on / 2**20:.1f} | "
              f"{mem_off / 2**20:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

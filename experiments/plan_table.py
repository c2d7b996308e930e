#!/usr/bin/env python3
"""The best grid of each strategy in `gcnlab plan --algo` outputs, as one Markdown table.

usage: experiments/plan_table.py PLAN.json [PLAN.json ...]

One row per strategy (its fastest grid, strategies by their best epoch), the predicted epoch split
into its compute and communication halves (the slowest rank's), MiB received by the busiest rank,
nnz max/mean and the largest rank's analytic memory; then how many grids were ranked and refused.
"""
import json
import sys


def table(path):
    plan = json.load(open(path))
    best = {}
    for s in plan["strategies"]:  # fastest first
        best.setdefault(s["algo"], s)
    mib = 1 << 20
    out = [f"`{path}`: {plan['dataset']}, dims {'-'.join(map(str, plan['dims']))}, {plan['ranks']} ranks, "
           f"machine {plan['machine']} ({plan['gpus_per_node']} per node)", "",
           "| strategy | best grid | epoch ms | compute ms | comm ms | MiB/rank | nnz max/mean | memory MiB |",
           "|---|---|---|---|---|---|---|---|"]
    for algo, s in best.items():
        out.append(f"| `{algo}` | {'x'.join(map(str, s['grid']))} | {1e3 * s['predicted_s']:.4g} | "
                   f"{1e3 * s['compute_s']:.4g} | {1e3 * s['comm_s']:.4g} | {s['wire_bytes_max'] / mib:.1f} | "
                   f"{s['nnz_max_over_mean']:.2f} | {s['memory_need_max'] / mib:.1f} |")
    out += ["", f"{len(plan['strategies'])} grids ranked, {len(plan['refused'])} refused."]
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("\n\n".join(table(p) for p in sys.argv[1:]))

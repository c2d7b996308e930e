#!/usr/bin/env python3
"""`gcnlab plan` outputs as Markdown tables (docs/planning.md's).

usage: experiments/plan_table.py PLAN.json|VALIDATION.json [...]

`plan --algo` outputs: one row per strategy (its fastest grid, strategies by their best epoch), the
predicted epoch split into its compute and communication halves (the slowest rank's), MiB received
by the busiest rank, nnz max/mean and the largest rank's analytic memory; then how many grids were
ranked and refused.

`plan --validate` outputs: one row per model and rank count: the runs, the median, worst and median
signed error, the measured-fastest configuration (over its repetitions' mean), its place in plan's
order, how many configurations the repetitions cannot separate from it (and the best place of one),
and what plan's first choice measured against it.
"""
import json
import statistics
import sys
from math import prod


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


def validation_table(path):
    v = json.load(open(path))
    groups = {}
    for p in v["points"]:
        groups.setdefault((p["model"], prod(p["grid"])), []).append(p)
    checks = {(c["model"], c["ranks"]): c for c in v["ranking"]}
    out = [f"`{path}`: machine {v['machine']}, median |error| {100 * v['median_abs_error']:.1f}%, worst "
           f"{100 * v['worst_abs_error']:.1f}%, Spearman {v['spearman']:.3f} over {len(v['points'])} runs", "",
           "| model | ranks | runs | median abs error | worst | median signed | measured fastest | its place | "
           "within the spread | plan's first choice measured |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for (model, ranks), points in sorted(groups.items()):
        errors = [p["error"] for p in points]
        c = checks.get((model, ranks))
        fastest = f"`{c['algo']}` {'x'.join(map(str, c['grid']))}" if c else "-"
        place = f"{c['predicted_place']} of {c['runs']}" if c else "-"
        tied = f"{c['tied']}, best #{c['tied_place']}" if c and c["tied"] else "-"
        regret = f"{100 * c['regret']:+.1f}%" if c else "-"
        out.append(f"| {model} | {ranks} | {len(points)} | {100 * statistics.median(map(abs, errors)):.1f}% | "
                   f"{100 * max(map(abs, errors)):.0f}% | {100 * statistics.median(errors):+.1f}% | {fastest} | "
                   f"{place} | {tied} | {regret} |")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("\n\n".join(validation_table(p) if json.load(open(p)).get("schema", "").startswith("gcnlab.plan-validation")
                       else table(p) for p in sys.argv[1:]))

#!/usr/bin/python3
"""One HTML page from a results folder: every figure, a summary table (best
algorithm per rank count, speedup over serial, bytes per rank), every run (also
as runs.csv beside the page, one row per run), and the failed runs with their
error messages.

    /usr/bin/python3 plots/report.py RESULTS [--out RESULTS/report.html]
"""
import argparse
import html
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import balance  # noqa: E402
import breakdown  # noqa: E402
import common  # noqa: E402
import loss  # noqa: E402
import memory  # noqa: E402
import predicted  # noqa: E402
import scaling  # noqa: E402
import volume  # noqa: E402

FIGURES = [
    ("Epoch time by category (slowest rank)", breakdown.make),
    ("Strong scaling", scaling.make),
    ("Communication volume: measured vs model", volume.make),
    ("Training curves vs serial", loss.make),
    ("Load balance", balance.make),
    ("Memory", memory.make),
]


def wire_max(run):
    return volume.volumes(run)[0]


def summary_rows(runs):
    """Per dataset and rank count: the fastest algorithm, its speedup over serial, bytes."""
    rows = []
    for dataset, rs in common.by_dataset(runs).items():
        best = common.best_per_point(rs)
        serial = best.get(("serial", 1))
        for p in sorted({p for _, p in best}):
            cands = [(common.epoch_time(best[(a, q)]), a) for a, q in best if q == p]
            t, algo = min(cands)
            run = best[(algo, p)]
            rows.append({"dataset": dataset, "ranks": p, "best": algo, "grid": "x".join(map(str, run["config"]["grid"])),
                         "epoch_ms": t * 1e3,
                         "speedup": common.epoch_time(serial) / t if serial else None,
                         "mib": wire_max(run) / common.MIB,
                         "others": [(a, tt) for tt, a in sorted(cands) if a != algo]})
    return rows


class Raw(str):
    """A table cell that is already HTML (a link)."""


def cell(c):
    return c if isinstance(c, Raw) else html.escape(str(c))


def anchor(dataset, algo, p):
    """The id of a strategy's first run at P in the table of all runs."""
    return "run-" + "-".join(str(x) for x in (dataset, algo, p)).replace(".", "_").replace(":", "_")


def link(dataset, algo, p, text=None):
    return Raw(f'<a href="#{anchor(dataset, algo, p)}">{html.escape(text or algo)}</a>')


def table(headers, rows, ids=None):
    out = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in headers) + "</tr>"]
    for i, r in enumerate(rows):
        rid = ids[i] if ids else None
        attr = f' id="{rid}"' if rid else ""
        out.append(f"<tr{attr}>" + "".join(f"<td>{cell(c)}</td>" for c in r) + "</tr>")
    return "\n".join(out) + "</table>"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--out")
    a = ap.parse_args()
    folder = Path(a.results)
    out = Path(a.out) if a.out else folder / "report.html"
    figdir = out.parent / "figures"
    runs = common.load_runs(folder)
    if not runs:
        print(f"report: error: no gcnlab results in '{folder}'", file=sys.stderr)
        return 1
    parts = [f"<h1>gcnlab report: {html.escape(str(folder))}</h1>",
             f"<p>{len(runs)} runs on {html.escape(common.machine(runs))}; datasets: "
             + html.escape(", ".join(sorted({r['dataset']['spec'] for r in runs}))) + "</p>"]
    srows = summary_rows(runs)
    parts.append("<h2>Summary: fastest algorithm per rank count</h2>")
    parts.append(table(["dataset", "P", "fastest", "grid", "epoch ms", "speedup vs serial", "MiB recv / rank / epoch",
                        "others (epoch ms)"],
                       [[r["dataset"], r["ranks"], link(r["dataset"], r["best"], r["ranks"]), r["grid"],
                         f"{r['epoch_ms']:.2f}", f"{r['speedup']:.2f}x" if r["speedup"] else "—", f"{r['mib']:.2f}",
                         Raw(", ".join(link(r["dataset"], a, r["ranks"]) + f" {t * 1e3:.1f}" for a, t in r["others"]))]
                        for r in srows]))
    parts.append("<p>Each strategy links to its runs in the table of all runs below.</p>")
    for heading, make in FIGURES:
        _, paths = make(runs, figdir)
        pngs = [p for p in paths if p.suffix == ".png"]
        if pngs:
            parts.append(f"<h2>{html.escape(heading)}</h2>")
            parts += [f'<p><img src="{p.relative_to(out.parent)}" alt="{html.escape(heading)}: {p.stem}" '
                      'style="max-width:100%"></p>' for p in pngs]
    _, paths = predicted.make(folder, figdir, runs=runs)
    pngs = [p for p in paths if p.suffix == ".png"]
    if pngs:
        parts.append("<h2>Performance model: predicted vs measured</h2>")
        parts += [f'<p><img src="{p.relative_to(out.parent)}" alt="predicted vs measured: {p.stem}" '
                  'style="max-width:60%"></p>' for p in pngs]
    csv = out.parent / "runs.csv"
    common.dataframe(runs).to_csv(csv, index=False)
    parts.append("<h2>All runs</h2>")
    parts.append(f'<p>One row per run, every breakdown category: <a href="{csv.name}">{csv.name}</a> '
                 "(pandas: <code>plots/common.py dataframe()</code>).</p>")
    rows, ids, seen = [], [], set()
    for r in sorted(runs, key=lambda r: (common.facet(r), common.algo_key(r["config"]["algo"]), r["config"]["ranks"])):
        c = r["config"]
        key = anchor(common.facet(r), c["algo"], c["ranks"])
        ids.append(None if key in seen else key)
        seen.add(key)
        try:
            href = Path(r["_file"]).resolve().relative_to(out.parent.resolve())
            file_cell = Raw(f'<a href="{html.escape(str(href))}">{html.escape(Path(r["_file"]).name)}</a>')
        except ValueError:  # results outside the report's folder
            file_cell = Path(r["_file"]).name
        rows.append([common.facet(r), c["algo"], c["ranks"], "x".join(map(str, c["grid"])),
                     f"{common.epoch_time(r) * 1e3:.2f}", f"{r['summary']['final_loss']:.5f}",
                     f"{100 * r['summary']['test_acc']:.2f}", f"{wire_max(r) / common.MIB:.2f}",
                     f"{r['load_balance']['nnz_max_over_mean']:.3f}", file_cell])
    parts.append(table(["dataset", "algo", "P", "grid", "epoch ms", "final loss", "test acc %", "MiB recv / rank",
                        "nnz max/mean", "file"], rows, ids))
    failed = common.failures(folder)
    if failed:
        parts.append(f"<h2>Failed runs ({len(failed)})</h2>")
        parts.append(table(["algo", "P", "grid", "error"],
                           [[f["algo"], f["ranks"], f.get("grid") or "", f.get("error") or ""] for f in failed]))
    style = ("<style>body{font-family:sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;font-size:13px}"
             "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}th{background:#eee}</style>")
    out.write_text("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>gcnlab report</title>" + style +
                   "</head><body>\n" + "\n".join(parts) + "\n</body></html>\n")
    print(f"report: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The HTML report as a reader gets it (tests/cli/report.sh runs it; usable on any report).

  valid     HTML Tidy finds no error and no warning in the page
  browser   headless Chromium loads the page in a 1280-pixel-wide frame: every
            figure loads (no broken image), none is shown at less than
            --min-scale of its natural size (a figure squeezed to the page
            width has unreadable labels), every in-page link has its target
  screenshot  optionally, a PNG of the top of the page (--screenshot FILE)

Usage: check_report.py REPORT.html [--min-scale 0.7] [--min-figures N] [--screenshot FILE]
Prints one line per figure and finding; exits 1 on any finding.
"""
import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile

FRAME_WIDTH = 1280

PROBE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>probe</title></head><body>
<pre id="out">pending</pre>
<iframe id="f" src="%s" style="width:%dpx;height:900px"></iframe>
<script>
document.getElementById('f').addEventListener('load', () => {
  const d = document.getElementById('f').contentDocument;
  const lines = [];
  for (const img of d.images) {
    const w = img.getBoundingClientRect().width;
    lines.push(`img ${img.getAttribute('src')} loaded=${img.complete && img.naturalWidth > 0} natural=${img.naturalWidth} shown=${Math.round(w)}`);
  }
  for (const a of d.querySelectorAll('a[href^="#"]'))
    if (!d.getElementById(a.getAttribute('href').slice(1))) lines.push('broken-anchor ' + a.getAttribute('href'));
  lines.push('done');
  document.getElementById('out').textContent = lines.join('\\n');
});
</script></body></html>
"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return name
    return None


# The sanitizer build's test environment preloads a library into every
# process; the browser and Tidy are not ours and run without it.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "LSAN_OPTIONS")}


def browser_args(extra):
    return [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
            "--virtual-time-budget=10000", "--hide-scrollbars"] + extra


def main():
    ap = argparse.ArgumentParser(description="check an HTML report in a validator and a browser")
    ap.add_argument("report")
    ap.add_argument("--min-scale", type=float, default=0.7)
    ap.add_argument("--min-figures", type=int, default=1)
    ap.add_argument("--screenshot", help="also write a PNG of the top of the page here")
    a = ap.parse_args()
    findings = []
    report = os.path.abspath(a.report)

    r = subprocess.run(["tidy", "-q", "-e", report], capture_output=True, text=True, env=CLEAN_ENV)
    if r.returncode != 0:
        findings.append("valid: HTML Tidy: " + (r.stderr.strip() or f"exit {r.returncode}"))
    else:
        print("ok   valid: HTML Tidy reports nothing")

    with tempfile.NamedTemporaryFile("w", suffix=".html", dir=os.path.dirname(report), delete=False) as f:
        f.write(PROBE % (html.escape(os.path.basename(report)), FRAME_WIDTH))
        probe = f.name
    try:
        out = subprocess.run(browser_args([f"--window-size={FRAME_WIDTH + 40},1000", "--dump-dom",
                                           "file://" + probe]), capture_output=True, text=True, timeout=120,
                             env=CLEAN_ENV).stdout
    finally:
        os.unlink(probe)
    m = re.search(r'<pre id="out">(.*?)</pre>', out, flags=re.S)
    lines = html.unescape(m.group(1)).split("\n") if m else []
    if not lines or lines[-1] != "done":
        findings.append("browser: the page did not finish loading in headless Chromium")
    figures = 0
    for line in lines:
        if line.startswith("img "):
            figures += 1
            src, loaded, natural, shown = re.match(r"img (\S+) loaded=(\w+) natural=(\d+) shown=(\d+)", line).groups()
            scale = int(shown) / int(natural) if int(natural) else 0
            if loaded != "true":
                findings.append(f"browser: {src}: broken image")
            elif scale < a.min_scale:
                findings.append(f"browser: {src}: shown at {scale:.2f} of its natural width ({natural} px into "
                                f"{shown}): its labels are unreadable at the page width")
            else:
                print(f"ok   browser: {src}: loads, {natural} px shown at {scale:.2f}")
        elif line.startswith("broken-anchor"):
            findings.append(f"browser: in-page link {line.split()[1]} has no target")
    if figures < a.min_figures:
        findings.append(f"browser: {figures} figure(s) on the page, expected at least {a.min_figures}")

    if a.screenshot:
        subprocess.run(browser_args([f"--window-size={FRAME_WIDTH},1600", f"--screenshot={os.path.abspath(a.screenshot)}",
                                     "file://" + report]), capture_output=True, timeout=120, env=CLEAN_ENV)
        print(f"screenshot: {a.screenshot}")
    for x in findings:
        print("FAIL:", x)
    print(f"{len(findings)} finding(s)" if findings else "report: all checks passed")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

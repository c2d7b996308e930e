#!/usr/bin/python3
"""The documentation, checked against the code (tests/cli/docs.sh runs it).

  links     every relative link and image in every Markdown file of the
            repository resolves: the file exists, and a #anchor names a
            heading of the target (GitHub's slugs)
  flags     every `gcnlab SUBCOMMAND ... --flag` written in the docs is a flag
            that subcommand's parser accepts (its --help, generated from
            apps/gcnlab/cli_spec.cpp); every other --flag named anywhere is
            one of gcnlab's, one of our scripts', or a listed outside tool's
  coverage  every flag the parser accepts is named somewhere in the docs
  table     every registered strategy has a row in the README's strategy
            table and in docs/strategies/README.md
  runnable  every ```sh block preceded by <!-- runnable --> runs (bash -e,
            in a scratch directory where build/ is the binary under test;
            the blocks of one file run in order in one directory)

Usage: check_docs.py --root REPO --gcnlab BINARY [--skip-runnable] [--only FILE.md]
Prints one line per finding and exits 1 if there is any.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

# Flags of programs that are not ours, named in the docs (mpirun/srun/sbatch,
# build tools). A gcnlab flag must never be added here: it would hide a rename.
FOREIGN_FLAGS = {
    "mpirun": {"--bind-to", "--map-by", "--oversubscribe", "--version", "--cpus-per-task"},
    "slurm": {"--nodes", "--ntasks-per-node", "--gpus-per-node", "--cpus-per-task", "--time",
              "--gpus-per-task", "--gpu-bind", "--account", "--ntasks", "--partition", "--array", "--dependency"},
    "ctest/cmake/git": {"--output-on-failure", "--build", "--target", "--parallel", "--stat",
                        "--oneline"},
    "python/pip": {"--upgrade", "--index-url", "--no-deps", "--system-site-packages"},
    "tools": {"--headless", "--screenshot", "--window-size", "--disable-gpu", "--no-sandbox", "--trace"},
}

SKIP_DIRS = {".git", "build", "build-asan", "build-fuzz", "build-cuda", "results", "node_modules"}


def markdown_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith(".venv") and not x.startswith(".")]
        for f in files:
            if f.endswith(".md"):
                yield os.path.join(d, f)


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def headings(path):
    out, fence = set(), False
    counts = {}
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"^#{1,6} ", line):
            s = slug(line.lstrip("#"))
            n = counts.get(s, 0)
            out.add(s if n == 0 else f"{s}-{n}")
            counts[s] = n + 1
    return out


def strip_code(text):
    """The text with fenced blocks removed (links inside them are not links)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def check_links(root, files, findings):
    for f in files:
        text = strip_code(open(f, encoding="utf-8").read())
        text = re.sub(r"`[^`\n]*`", "", text)  # nor inside code spans
        for m in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target) or target.startswith("mailto:"):
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            rel = os.path.relpath(f, root)
            if not os.path.exists(dest):
                findings.append(f"link: {rel}: {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in headings(dest):
                findings.append(f"link: {rel}: {target}: no heading '#{anchor}' in {os.path.relpath(dest, root)}")


def help_flags(text):
    return set(re.findall(r"^\s+(?:-\w,)?(--[a-z][a-z0-9-]*)", text, flags=re.M)) - {"--help"}


def gcnlab_flags(gcnlab):
    top = subprocess.run([gcnlab, "--help"], capture_output=True, text=True).stdout
    subs = sorted(set(re.findall(r"^\s+(?:mpirun -np P )?gcnlab ([a-z]+)", top, flags=re.M)))
    flags = {}
    for s in subs:
        out = subprocess.run([gcnlab, s, "--help"], capture_output=True, text=True).stdout
        flags[s] = help_flags(out)
    flags[""] = {"--version", "--help"}
    return flags


def script_flags(root):
    """Flags of our own scripts: argparse's --help, and bash scripts' case patterns."""
    out = set()
    for d in ("experiments", "plots", "scripts", "tests/docs"):
        for f in sorted(os.listdir(os.path.join(root, d))):
            p = os.path.join(root, d, f)
            src = open(p, encoding="utf-8", errors="replace").read() if os.path.isfile(p) else ""
            if f.endswith(".py") and "__main__" in src:
                r = subprocess.run(["/usr/bin/python3", p, "--help"], capture_output=True, text=True, timeout=60)
                out |= set(re.findall(r"(--[a-z][a-z0-9-]*)", r.stdout))
            elif f.endswith(".sh"):
                out |= set(re.findall(r"^\s*(?:\|\s*)?(--[a-z][a-z0-9-]*)[|)]", src, flags=re.M))
    return out


def doc_texts(files):
    return {f: open(f, encoding="utf-8").read() for f in files}


def gcnlab_invocations(text):
    """(subcommand, flags) of each `gcnlab SUB ...` command written in a code
    block or a code span (a block's line continuations joined)."""
    chunks = []
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
        chunks += block.replace("\\\n", " ").split("\n")
    chunks += re.findall(r"`([^`\n]+)`", strip_code(text))
    for c in chunks:
        for m in re.finditer(r"(?:^|[\s/])gcnlab ([a-z]+)\b(.*)", c):
            rest = re.split(r"[;|#]|&&", m.group(2))[0]
            yield m.group(1), re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest)


def check_flags(root, files, gcnlab, findings):
    flags = gcnlab_flags(gcnlab)
    ours = set().union(*flags.values())
    scripts = script_flags(root)
    foreign = set().union(*FOREIGN_FLAGS.values())
    texts = doc_texts(files)
    named = set()
    for f, text in texts.items():
        rel = os.path.relpath(f, root)
        for sub, fl in gcnlab_invocations(text):
            if sub not in flags:
                if sub in ("train", "info", "prepare", "partition", "compare", "plan", "simulate", "bench",
                           "strategies"):
                    findings.append(f"flags: {rel}: 'gcnlab {sub}': no such subcommand")
                continue
            for x in fl:
                if x not in flags[sub] and x not in ("--help",):
                    findings.append(f"flags: {rel}: 'gcnlab {sub} {x}': not an option of gcnlab {sub}")
        for x in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text):
            named.add(x)
            if x not in ours and x not in scripts and x not in foreign:
                findings.append(f"flags: {rel}: '{x}' is no option of gcnlab, of our scripts or of a listed tool")
    for sub, fl in sorted(flags.items()):
        for x in sorted(fl - named):
            findings.append(f"coverage: gcnlab {sub} {x} is documented nowhere")


def check_table(root, gcnlab, findings):
    info = json.loads(subprocess.run([gcnlab, "strategies", "--json"], capture_output=True, text=True).stdout)
    names = [s["name"] for s in (info["strategies"] if isinstance(info, dict) else info)]
    for page in ("README.md", "docs/strategies/README.md"):
        rows = set(re.findall(r"^\| `([^`]+)` \|", open(os.path.join(root, page), encoding="utf-8").read(), flags=re.M))
        for n in names:
            if n not in rows:
                findings.append(f"table: {page}: no row for the registered strategy '{n}'")


def runnable_blocks(text):
    return re.findall(r"^<!-- runnable -->\n```(?:sh|bash)\n(.*?)^```", text, flags=re.S | re.M)


def check_runnable(root, files, gcnlab, findings):
    bindir = os.path.dirname(os.path.abspath(gcnlab))
    for f in files:
        blocks = runnable_blocks(open(f, encoding="utf-8").read())
        if not blocks:
            continue
        rel = os.path.relpath(f, root)
        with tempfile.TemporaryDirectory() as work:
            # the repository's folders, and build/ = the binary under test
            for entry in os.listdir(root):
                if entry not in SKIP_DIRS and not entry.startswith("."):
                    os.symlink(os.path.join(root, entry), os.path.join(work, entry))
            os.symlink(bindir, os.path.join(work, "build"))
            for i, block in enumerate(blocks, 1):
                t0 = time.time()
                r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=work,
                                   capture_output=True, text=True, timeout=600)
                status = "ok  " if r.returncode == 0 else "FAIL"
                print(f"{status} runnable {rel} block {i} ({time.time() - t0:.1f} s)")
                if r.returncode != 0:
                    tail = "\n".join((r.stdout + r.stderr).strip().split("\n")[-8:])
                    findings.append(f"runnable: {rel} block {i} exited {r.returncode}:\n{block}\n--- output tail:\n{tail}")


def main():
    ap = argparse.ArgumentParser(description="check the docs against the code")
    ap.add_argument("--root", required=True)
    ap.add_argument("--gcnlab", required=True)
    ap.add_argument("--skip-runnable", action="store_true")
    ap.add_argument("--only", help="run the runnable blocks of this file only")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    files = sorted(markdown_files(root))
    findings = []
    check_links(root, files, findings)
    check_flags(root, files, a.gcnlab, findings)
    check_table(root, a.gcnlab, findings)
    print(f"checked {len(files)} Markdown files: links, flags, strategy tables")
    if not a.skip_runnable:
        run = [os.path.join(root, a.only)] if a.only else files
        check_runnable(root, run, a.gcnlab, findings)
    for x in findings:
        print("FAIL:", x)
    print(f"{len(findings)} finding(s)" if findings else "docs: all checks passed")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

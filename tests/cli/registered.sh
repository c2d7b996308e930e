#!/usr/bin/env bash
# Every test case is run by some registered test. For each Catch2 binary that ctest runs, the
# union of the registered filters' test cases is the binary's whole list; and the parts that
# split one suite by family (strategies_<part>_np<n>, tests/CMakeLists.txt) hold every case of
# that suite exactly once at every rank count, so splitting it for time lost no test.
source "$(dirname "$0")/lib.sh"
: "${CTEST:?run through ctest}"

"$CTEST" --show-only=json-v1 >"$WORK/tests.json" 2>"$WORK/ctest.err" || { cat "$WORK/ctest.err"; fail "ctest --show-only"; finish; }
"$PYTHON" - "$WORK/tests.json" <<'PY' || fail "registered tests"
import collections, functools, json, os, re, subprocess, sys

tests = json.load(open(sys.argv[1]))["tests"]

@functools.lru_cache(maxsize=None)
def _cases(binary, args):
    out = subprocess.run([binary, *args, "--list-test-names-only"], capture_output=True, text=True)
    return [line for line in out.stdout.splitlines() if line.strip()]

def cases(binary, args):
    """The test-case names Catch2 selects with these filter arguments."""
    return _cases(binary, tuple(args))

# Catch2 binaries: commands `mpiexec -n N binary [filter]` whose binary is one of ours.
runs = collections.defaultdict(list)          # binary -> [(test name, filter args)]
for t in tests:
    cmd = t.get("command") or []
    binary = next((c for c in cmd if os.path.basename(c).startswith("test_")), None)
    if binary and os.access(binary, os.X_OK):
        runs[binary].append((t["name"], cmd[cmd.index(binary) + 1:]))
assert runs, "no Catch2 test binary is registered"

bad = 0
for binary, regs in sorted(runs.items()):
    everything = set(cases(binary, []))
    assert everything, f"{binary} lists no test case"  # a binary that fails to list would pass vacuously
    covered = set()
    for _, args in regs:
        covered |= set(cases(binary, args))
    missing = sorted(everything - covered)
    name = os.path.basename(binary)
    if missing:
        bad += 1
        print(f"FAIL: {name}: {len(missing)} test case(s) no registered test runs: {missing[:5]}")
    else:
        print(f"ok   {name}: all {len(everything)} test cases run by {len(regs)} registered tests")

# The parts of one split suite: same binary, names <suite>_<part>_np<n>; each rank count's parts
# partition the cases of the suite's whole filter (every case but [slow] and [determinism]).
parts = collections.defaultdict(list)         # (binary, np) -> [(name, args)]
for binary, regs in runs.items():
    for name, args in regs:
        m = re.fullmatch(r"strategies_(\w+)_np(\d+)", name)
        if m:
            parts[(binary, int(m.group(2)))].append((name, args))
assert parts, "no strategies_<part>_np<n> test is registered"
whole_filter = ["~[slow]~[determinism]"]
for (binary, np), regs in sorted(parts.items()):
    whole = cases(binary, whole_filter)
    assert whole, f"{binary} {whole_filter} selects no test case"
    seen = collections.Counter(c for _, args in regs for c in cases(binary, args))
    twice = sorted(c for c, k in seen.items() if k > 1)
    lost = sorted(set(whole) - set(seen))
    extra = sorted(set(seen) - set(whole))
    if twice or lost or extra:
        bad += 1
        print(f"FAIL: strategies parts at np={np}: run twice {twice[:3]}, in no part {lost[:3]}, outside the suite {extra[:3]}")
    else:
        print(f"ok   strategies at np={np}: {len(regs)} parts hold its {len(whole)} cases once each")
sys.exit(1 if bad else 0)
PY
finish

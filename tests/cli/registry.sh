#!/usr/bin/env bash
# The registry is the one source of truth (algorithms/registry.hpp):
# `gcnlab strategies [--json]` lists every strategy with its grids,
# capabilities and options; the CLI's --algo and options come from it; no C++
# outside algorithms/ and tests/ holds a strategy's name as a string literal
# (so none can compare with one), and the sweep runner and the plots hold no
# list of strategies (they read `gcnlab strategies --json`).
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)

"$GCNLAB" strategies --json >"$WORK/registry.json" || fail "strategies --json"
"$GCNLAB" strategies >"$WORK/registry.txt" || fail "strategies"
"$GCNLAB" train --help >"$WORK/help.txt" || fail "train --help"
"$PYTHON" - "$WORK/registry.json" "$WORK/registry.txt" "$WORK/help.txt" <<'PY' || fail "registry output"
import json, sys
reg = json.load(open(sys.argv[1]))
assert reg["schema"] == "gcnlab.strategies/1"
text, help_text = open(sys.argv[2]).read(), open(sys.argv[3]).read()
names = [s["name"] for s in reg["strategies"]]
assert len(names) == len(set(names)) and "serial" in names, names
for s in reg["strategies"]:
    assert s["summary"] and s["grid_axes"] >= 1, s["name"]
    assert s["name"] in text and s["name"] in help_text, s["name"]
    for p, grids in s["grids"].items():  # every grid has grid_axes factors (serial: one rank)
        assert grids and all(len(g) == s["grid_axes"] for g in grids), (s["name"], p)
    for o in s["options"]:  # every declared option is a flag of train, with its choices
        assert o["flag"] in help_text, (s["name"], o["flag"])
        for c in o["choices"]:
            assert c in help_text, (s["name"], o["flag"], c)
print("ok   registry:", ", ".join(names))
PY

# The models' registry (models/registry.hpp): `gcnlab models [--json]` lists every
# model with the strategies it runs on, --model's choices come from it, and a
# model that demands nothing beyond the convolution runs on every strategy.
"$GCNLAB" models --json >"$WORK/models.json" || fail "models --json"
"$GCNLAB" models >"$WORK/models.txt" || fail "models"
"$PYTHON" - "$WORK/models.json" "$WORK/models.txt" "$WORK/help.txt" "$WORK/registry.json" <<'PY' || fail "models output"
import json, sys
reg = json.load(open(sys.argv[1]))
assert reg["schema"] == "gcnlab.models/1"
text, help_text = open(sys.argv[2]).read(), open(sys.argv[3]).read()
strategies = [s["name"] for s in json.load(open(sys.argv[4]))["strategies"]]
names = [m["name"] for m in reg["models"]]
assert len(names) == len(set(names)) and "gcn" in names, names
for m in reg["models"]:
    assert m["summary"] and m["name"] in text and m["name"] in help_text, m["name"]
    assert m["strategies"] and set(m["strategies"]) <= set(strategies), m
    if not any(m["demands"].values()):
        assert m["strategies"] == strategies, m
print("ok   models:", ", ".join(names))
PY

# No string literal equal to a strategy's name in C++ outside algorithms/ and tests/.
names=$("$PYTHON" -c 'import json,sys; print("\n".join(s["name"] for s in json.load(open(sys.argv[1]))["strategies"]))' \
        "$WORK/registry.json")
cd "$root"
files=$(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' 2>/dev/null | grep -v -e '^algorithms/' -e '^tests/' || true)
[ -n "$files" ] || files=$(find . -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' | sed 's|^\./||' |
                           grep -v -e '^algorithms/' -e '^tests/' -e '^build')
found=0
while read -r name; do
  # shellcheck disable=SC2086
  if hits=$(grep -nF "\"$name\"" $files); then
    fail "C++ outside algorithms/ and tests/ names strategy '$name':"; echo "$hits"; found=1
  fi
done <<<"$names"
[ "$found" -eq 0 ] && echo "ok   no C++ outside algorithms/ and tests/ names a strategy"

# No list of strategy names in the sweep runner or the plots: no list, tuple,
# set or dict display in their code holds two or more registered names.
"$PYTHON" - "$WORK/registry.json" experiments/sweep.py plots/*.py <<'PY' || fail "a strategy list in the scripts"
import ast, json, sys
names = {s["name"] for s in json.load(open(sys.argv[1]))["strategies"]}
bad = []
for path in sys.argv[2:]:
    for node in ast.walk(ast.parse(open(path).read())):
        items = node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else \
                node.keys if isinstance(node, ast.Dict) else []
        held = [i.value for i in items if isinstance(i, ast.Constant) and i.value in names]
        if len(held) >= 2:
            bad.append(f"{path}:{node.lineno}: {held}")
if bad:
    print("\n".join(bad))
    sys.exit(1)
print("ok   experiments/sweep.py and plots/ hold no strategy list")
PY
finish

#!/usr/bin/env bash
# Threads on their own cores (issue 36): a rank whose threads exceed the cores
# of its binding (hwloc) prints one warning line with the fix and records it in
# the results' provenance; OpenMPI binds a lone rank to one core by default, so
# `mpirun -np 1 ... --threads 2` warns, `--bind-to none` and `--map-by
# slot:PE=2` do not. No timing is asserted.
source "$(dirname "$0")/lib.sh"
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
if [ "$cores" -lt 2 ] || ! "$MPIEXEC" --version 2>/dev/null | grep -qE "Open MPI|OpenRTE"; then
  echo "skipped: needs 2 cores and OpenMPI's default binding (cores: $cores)"
  exit 0
fi
DATA="sbm:nodes=600,classes=4,avg-degree=8,features=16,seed=3"

# run NAME MPIRUN-FLAGS...: train on one rank with 2 threads
run() {
  local name=$1
  shift
  "$MPIEXEC" -np 1 "$@" "$GCNLAB" train --algo serial --dataset "$DATA" --epochs 2 --threads 2 --quiet \
    --out "$WORK/$name.json" >/dev/null 2>"$WORK/$name.log" || { cat "$WORK/$name.log"; fail "$name: run"; }
}
recorded() { "$PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))['provenance']['binding']['warning'])" "$1"; }

run default
[ "$(grep -c 'gcnlab: warning: 2 thread(s) share 1 core(s)' "$WORK/default.log")" -eq 1 ] \
  || { cat "$WORK/default.log"; fail "default binding: no warning line"; }
grep -q -- "--map-by slot:PE=2 or --bind-to none; srun --cpus-per-task=2" "$WORK/default.log" || fail "the warning names no fix"
case "$(recorded "$WORK/default.json")" in "2 thread(s) share 1 core(s)"*) ;; *) fail "default binding: not recorded";; esac
echo "ok   default binding: $(grep 'gcnlab: warning' "$WORK/default.log")"
for flags in "--bind-to none" "--map-by slot:PE=2"; do
  name=$(echo "$flags" | tr -c 'a-zA-Z0-9\n' '_')
  # shellcheck disable=SC2086
  run "$name" $flags
  if grep -q "gcnlab: warning" "$WORK/$name.log" || [ -n "$(recorded "$WORK/$name.json")" ]; then
    cat "$WORK/$name.log"; fail "$flags: warned"
  else
    echo "ok   $flags: no warning"
  fi
done
"$MPIEXEC" -np 1 "$GCNLAB" bench spmm --dataset "$DATA" --f 16 --threads 2 --reps 2 >"$WORK/bench.txt" 2>/dev/null \
  || fail "bench spmm"
grep -q "^bench=warning kind=binding threads=2 cores=1" "$WORK/bench.txt" || { cat "$WORK/bench.txt"; fail "bench: no warning line"; }
finish

#!/usr/bin/env bash
# The sweep's Slurm scripts live with the scheduler (issue 47), exercised without Slurm: a fake srun runs
# mpirun here, a fake scontrol records what it was asked.
#  - a generated array script asks for the warning signal, requeueing and append-mode logs, and runs
#    gcnlab with --checkpoint, --resume auto and --stop-grace;
#  - SIGUSR1 to the batch shell (what --signal=B:USR1@T sends) reaches the run, which stops with a
#    checkpoint; the task records "requeued" and calls `scontrol requeue $SLURM_JOB_ID`; the requeued task
#    (SLURM_RESTART_COUNT=1) resumes and ends ok with the whole history; out of requeues it says "stopped";
#  - sweep files with a bad name or a missing or mistyped field: one line, exit status 2, nothing written.
source "$(dirname "$0")/lib.sh"
SWEEP="$GCNLAB_SOURCE_DIR/experiments/sweep.py"

cat >"$WORK/long.json" <<'JSON'
{"name": "long", "datasets": ["sbm:nodes=3000,classes=6,avg-degree=10,features=32,seed=7"],
 "algorithms": ["1d"], "ranks": [2], "options": {"epochs": 300, "hidden": 32, "dropout": 0.5, "threads": 1}}
JSON
"$PYTHON" "$SWEEP" "$WORK/long.json" --slurm "$WORK/slurm" --backend cpu --gcnlab "$GCNLAB" >"$WORK/gen.txt" \
  || fail "slurm generation"
script="$WORK/slurm/long-np2.sbatch"
for want in "#SBATCH --signal=B:USR1@120" "#SBATCH --requeue" "#SBATCH --open-mode=append" \
            '--checkpoint "$RESULTS/checkpoints/$id" --resume auto --stop-grace 120' \
            "trap 'kill -USR1 \$run 2>/dev/null' USR1" 'scontrol requeue "$SLURM_JOB_ID"'; do
  grep -qF -- "$want" "$script" || fail "the array script lacks: $want"
done
echo "ok   the array script: $(grep -c . "$script") lines, signal, requeue, resume and the trap"

mkdir -p "$WORK/bin"
cat >"$WORK/bin/srun" <<SH
#!/bin/bash
n=1
while [[ \$# -gt 0 && \$1 == --* ]]; do case \$1 in --ntasks=*) n=\${1#--ntasks=} ;; esac; shift; done
exec "$MPIEXEC" -np "\$n" "\$@"
SH
cat >"$WORK/bin/scontrol" <<SH
#!/bin/bash
echo "\$*" >>"$WORK/scontrol.calls"
SH
chmod +x "$WORK/bin/srun" "$WORK/bin/scontrol"
export PATH="$WORK/bin:$PATH" RESULTS="$WORK/cluster" SLURM_SUBMIT_DIR="$WORK/slurm" SLURM_ARRAY_TASK_ID=0
bash "$WORK/slurm/long-prepare.sbatch" >"$WORK/prep.out" 2>&1 || { cat "$WORK/prep.out"; fail "prepare job"; }
id=$(cut -f1 "$WORK/slurm/long-np2.runs.tsv")
log="$RESULTS/logs/$id.log"

# task(): the array task as Slurm would start it (job id 4242), warned with USR1 once epoch 3 ran
warned_task() {
  SLURM_JOB_ID=4242 bash "$script" &
  local shell=$!
  for _ in $(seq 600); do grep -q "^epoch    3 " "$log" 2>/dev/null && break; sleep 0.1; done
  kill -USR1 "$shell"
  wait "$shell"
}
warned_task
rc=$?
[ "$rc" -eq 0 ] || fail "warned task: exit status $rc (a requeued task ends 0)"
read -r status _ code count <"$RESULTS/status/$id"
[ "$status $code $count" = "requeued 75 1" ] || fail "warned task: status '$(cat "$RESULTS/status/$id")'"
[ "$(cat "$WORK/scontrol.calls")" = "requeue 4242" ] || fail "scontrol was asked: $(cat "$WORK/scontrol.calls")"
grep -q "gcnlab: stopped by SIGUSR1" "$log" || fail "the run did not stop on the signal"
ls "$RESULTS/checkpoints/$id" | grep -q epoch- || fail "no checkpoint"
echo "ok   USR1 to the batch shell: the run stopped, status '$(cat "$RESULTS/status/$id")', scontrol requeue 4242"

SLURM_JOB_ID=4242 SLURM_RESTART_COUNT=1 bash "$script" || fail "requeued task: exit status $?"
grep -q "^ok" "$RESULTS/status/$id" || fail "requeued task: status '$(cat "$RESULTS/status/$id")'"
"$PYTHON" - "$RESULTS/runs/$id.json" <<'PY' || fail "requeued task: results"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "complete" and [e["epoch"] for e in r["epochs"]] == list(range(300))
assert len(r["segments"]) == 2 and r["segments"][1]["first_epoch"] > 0, r["segments"]
PY
[ "$(wc -l <"$WORK/scontrol.calls")" -eq 1 ] || fail "the completed task requeued"
echo "ok   the requeued task resumed and completed: $(cat "$RESULTS/status/$id")"

# out of requeues: the task says stopped and exits 75 without asking for another
rm -rf "$RESULTS/runs" "$RESULTS/status" "$RESULTS/checkpoints" "$log"
mkdir -p "$RESULTS/runs" "$RESULTS/status"
export MAX_REQUEUES=0
warned_task
rc=$?
unset MAX_REQUEUES
[ "$rc" -eq 75 ] || fail "out of requeues: exit status $rc"
grep -q "^stopped" "$RESULTS/status/$id" || fail "out of requeues: status '$(cat "$RESULTS/status/$id")'"
[ "$(wc -l <"$WORK/scontrol.calls")" -eq 1 ] || fail "out of requeues: scontrol was called"
"$PYTHON" "$SWEEP" "$WORK/long.json" --collect --results "$RESULTS" >"$WORK/collect.txt" 2>&1
grep -q "stopped by the warning signal" "$RESULTS/index.jsonl" || fail "collect: the stopped run's line"
echo "ok   out of requeues: status stopped, exit 75, collected as failed with the reason"

# --- sweep files checked before anything is written
bad() {  # bad LABEL JSON MESSAGE
  printf '%s\n' "$2" >"$WORK/bad.json"
  rm -rf "$WORK/out"
  "$PYTHON" "$SWEEP" "$WORK/bad.json" --results "$WORK/out/res" --slurm "$WORK/out/slurm" --gcnlab "$GCNLAB" \
    >"$WORK/bad.out" 2>"$WORK/bad.err"
  local rc=$?
  if [ "$rc" -ne 2 ]; then fail "$1: exit status $rc"; cat "$WORK/bad.err"
  elif [ "$(grep -c . "$WORK/bad.err")" -ne 1 ] || ! grep -qF -- "$3" "$WORK/bad.err"; then
    fail "$1: not one line naming '$3'"; cat "$WORK/bad.err"
  elif [ -e "$WORK/out" ] || [ -n "$(ls "$WORK" | grep -- -prepare.sbatch)" ]; then fail "$1: something was written"
  else echo "ok   $1: $(cat "$WORK/bad.err")"
  fi
}
REST='"datasets": ["sbm:nodes=100,classes=2,avg-degree=4,features=4,seed=1"], "algorithms": ["1d"], "ranks": [1]'
bad "name a/b" "{\"name\": \"a/b\", $REST}" "is not a plain identifier"
bad "name ../x" "{\"name\": \"../x\", $REST}" "is not a plain identifier"
bad 'name x$(touch)' "{\"name\": \"x\$(touch $WORK/pwned)\", $REST}" "is not a plain identifier"
bad "empty name" "{\"name\": \"\", $REST}" "is not a plain identifier"
bad "no name" "{$REST}" "has no 'name'"
bad "no ranks" '{"name": "x", "datasets": ["sbm:nodes=100"], "algorithms": ["1d"]}' "has no 'ranks'"
bad "ranks 0" '{"name": "x", "datasets": ["sbm:nodes=100"], "algorithms": ["1d"], "ranks": [0]}' "positive integers"
bad "datasets a string" '{"name": "x", "datasets": "sbm", "algorithms": ["1d"], "ranks": [1]}' "list of strings"
bad "not JSON" '{"name": ' "is not valid JSON"
[ ! -e "$WORK/pwned" ] || fail "a name ran a command"
finish

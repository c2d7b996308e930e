#!/usr/bin/env bash
# Runs that live with a scheduler (issue 47):
#  - SIGUSR1 to mpirun (what `#SBATCH --signal=B:USR1@T` and the script's trap send) and SIGTERM to every
#    rank (what Slurm's step daemon sends at the time limit) mid-run under 1d, 2d and plexus-3d on 4 ranks:
#    one "gcnlab: stopped" line, a checkpoint at the epoch boundary, partial results (status "stopped"),
#    exit status 75, within 10 s of the signal; the same command resumes and ends bitwise equal to the
#    uninterrupted run, its results listing every epoch once with the segment it ran in;
#  - a signal raised on one rank only (between its forward and backward pass, during a checkpoint write,
#    during setup) stops every rank at the next boundary; a second signal ends the job as without a handler,
#    the same one twice within 2 s is one request; ranks that reach no boundary within --stop-grace end the job;
#  - without --checkpoint the run still ends cleanly, its results marked stopped;
#  - --resume auto on a finished run: exit 0, results untouched, or written from the checkpoint when missing;
#  - a checkpoint write that fails on a full disk leaves no staging directory and the previous checkpoint whole;
#    a killed writer's temporary file is removed by the next write of the same file.
source "$(dirname "$0")/lib.sh"
SCHEMA="$GCNLAB_SOURCE_DIR/common/results/run.schema.json"
DATA="sbm:nodes=3000,classes=6,avg-degree=10,features=32,seed=7"
EPOCHS=150
MODEL=(--dataset "$DATA" --epochs "$EPOCHS" --hidden 32 --dropout 0.5 --seed 3)

# wait_for FILE PATTERN: until FILE has a line matching PATTERN (60 s at most)
wait_for() {
  for _ in $(seq 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# check_stopped NAME RC LOG DIR: exit status 75, one stop line naming the checkpoint of the epochs
# completed, WORK/NAME.json with status stopped and epochs 0..k-1 once each; prints k
check_stopped() {
  local name=$1 rc=$2 log=$3 dir=$4
  [ "$rc" -eq 75 ] || { cat "$log"; fail "$name: exit status $rc, not 75"; return; }
  [ "$(grep -c 'gcnlab: stopped by' "$log")" -eq 1 ] || { cat "$log"; fail "$name: not one stop line"; return; }
  [ "$(grep -c 'gcnlab: error' "$log")" -eq 0 ] || { cat "$log"; fail "$name: an error line"; return; }
  "$PYTHON" - "$WORK/$name.json" "$dir" "$SCHEMA" <<'PY' || fail "$name: stopped results or checkpoint"
import json, os, sys, jsonschema
r, ck = json.load(open(sys.argv[1])), sys.argv[2]
jsonschema.validate(r, json.load(open(sys.argv[3])))
k = r["stopped"]["epochs_completed"]
assert r["status"] == "stopped" and r["stopped"]["exit_status"] == 75, r["stopped"]
assert [e["epoch"] for e in r["epochs"]] == list(range(k)), [e["epoch"] for e in r["epochs"]]
if ck != "-":
    assert r["stopped"]["checkpoint"] == f"{ck}/epoch-{k:06d}", r["stopped"]
    assert os.path.exists(f"{ck}/epoch-{k:06d}/checkpoint.json")
    assert not [f for f in os.listdir(ck) if ".tmp-" in f], os.listdir(ck)
else:
    assert r["stopped"]["checkpoint"] is None
print(k)
PY
}

# check_whole NAME REF: WORK/NAME.json complete, every epoch once, losses bitwise those of WORK/REF.json,
# and at least two segments; final weights equal (WORK/NAME-w, WORK/REF-w)
check_whole() {
  "$PYTHON" - "$WORK/$1.json" "$WORK/$2.json" "$SCHEMA" <<'PY' || fail "$1: resumed results"
import json, sys, jsonschema
r, ref = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
jsonschema.validate(r, json.load(open(sys.argv[3])))
assert r["status"] == "complete" and r["stopped"] is None
assert [e["epoch"] for e in r["epochs"]] == [e["epoch"] for e in ref["epochs"]]
assert [e["loss"] for e in r["epochs"]] == [e["loss"] for e in ref["epochs"]], "losses differ"
segs = r["segments"]
assert len(segs) >= 2 and [s["segment"] for s in segs] == list(range(len(segs)))
for e in r["epochs"]:
    s = max((s for s in segs if s["first_epoch"] <= e["epoch"]), key=lambda s: s["first_epoch"])
    assert e["segment"] == s["segment"], (e["epoch"], e["segment"])
PY
  for l in 0 1 2; do
    cmp -s "$WORK/$1-w/final/W$l.npy" "$WORK/$2-w/final/W$l.npy" || fail "$1: final W$l differs from $2's"
  done
}

for algo in 1d 2d plexus-3d; do
  "$MPIEXEC" -np 4 "$GCNLAB" train --algo "$algo" "${MODEL[@]}" --out "$WORK/$algo-full.json" \
    --weights-out "$WORK/$algo-full-w" 2>"$WORK/log" || { cat "$WORK/log"; fail "$algo: uninterrupted run"; }
  for how in usr1-mpirun term-ranks; do
    name=$algo-$how ck=$WORK/$algo-$how-ck
    run=(train --algo "$algo" "${MODEL[@]}" --checkpoint "$ck" --checkpoint-every 50 --resume auto)
    "$MPIEXEC" -np 4 "$GCNLAB" "${run[@]}" --out "$WORK/$name.json" >"$WORK/$name.log" 2>&1 &
    pid=$!
    wait_for "$WORK/$name.log" "^epoch    3 " || fail "$name: no epoch 3"
    sent=$(date +%s.%N)
    if [ "$how" = usr1-mpirun ]; then kill -USR1 "$pid"; else kill -TERM $(pgrep -P "$pid"); fi
    wait "$pid"
    rc=$?
    took=$(awk -v a="$sent" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    awk -v t="$took" 'BEGIN { exit !(t <= 10) }' || fail "$name: ended $took s after the signal"
    k=$(check_stopped "$name" "$rc" "$WORK/$name.log" "$ck")
    "$MPIEXEC" -np 4 "$GCNLAB" "${run[@]}" --out "$WORK/$name.json" --weights-out "$WORK/$name-w" \
      2>"$WORK/log" || { cat "$WORK/log"; fail "$name: resume"; }
    grep -q "resuming at epoch $k from $ck/epoch-$(printf %06d "$k")" "$WORK/log" || fail "$name: resumed elsewhere"
    check_whole "$name" "$algo-full"
    echo "ok   $algo: $how after epoch 3: stopped after $k epochs in $took s (exit 75), resumed to epoch $EPOCHS bitwise"
  done
done

# --- a signal on one rank only, at a chosen moment (GCNLAB_INJECT_SIGNAL=RANK:WHERE:SIG)
# injected NAME ALGO SPEC EXPECTED_K [flags]: the run stops after EXPECTED_K epochs, then resumes to ALGO's
# uninterrupted run
injected() {
  local name=$1 algo=$2 spec=$3 expect=$4
  shift 4
  local ck=$WORK/$name-ck
  local run=(train --algo "$algo" "${MODEL[@]}" --checkpoint "$ck" --resume auto "$@")
  GCNLAB_INJECT_SIGNAL=$spec timeout 60 "$MPIEXEC" -np 4 "$GCNLAB" "${run[@]}" --out "$WORK/$name.json" \
    >"$WORK/$name.log" 2>&1
  local rc=$? k
  k=$(check_stopped "$name" "$rc" "$WORK/$name.log" "$ck")
  [ "$k" = "$expect" ] || fail "$name: stopped after $k epochs, expected $expect"
  "$MPIEXEC" -np 4 "$GCNLAB" "${run[@]}" --out "$WORK/$name.json" --weights-out "$WORK/$name-w" 2>"$WORK/log" ||
    { cat "$WORK/log"; fail "$name: resume"; }
  check_whole "$name" "$algo-full"
  echo "ok   $name under $algo ($spec): stopped after $k epochs, resumed bitwise"
}
for algo in 1d 2d plexus-3d; do
  injected "$algo-mid-epoch" "$algo" 2:5:USR1 6              # between rank 2's forward and backward of epoch 5
  injected "$algo-in-checkpoint" "$algo" 1:checkpoint-write:TERM 20 --checkpoint-every 20  # in the first checkpoint write
  injected "$algo-in-setup" "$algo" 3:setup:USR1 1           # during setup: the first boundary is epoch 1's end
done

# --- a second signal ends the job as it would without a handler
"$MPIEXEC" -np 4 "$GCNLAB" train --algo 1d "${MODEL[@]}" >"$WORK/twice.log" 2>&1 &
pid=$!
wait_for "$WORK/twice.log" "^epoch    3 " || fail "twice: no epoch 3"
rank=$(pgrep -P "$pid" | head -1)
kill -TERM "$rank"; kill -USR1 "$rank"
timeout 20 tail --pid="$pid" -f /dev/null
wait "$pid"
rc=$?
{ [ "$rc" -ne 0 ] && [ "$rc" -ne 75 ]; } || fail "twice: exit status $rc"
echo "ok   a second signal: the job ended with status $rc"

# --- the same signal delivered twice at once (step daemon and srun both deliver SIGTERM) is one request
"$MPIEXEC" -np 4 "$GCNLAB" train --algo 1d "${MODEL[@]}" --out "$WORK/dup.json" >"$WORK/dup.log" 2>&1 &
pid=$!
wait_for "$WORK/dup.log" "^epoch    3 " || fail "dup: no epoch 3"
ranks=$(pgrep -P "$pid")
kill -TERM $ranks; sleep 0.01; kill -TERM $ranks
wait "$pid"
k=$(check_stopped dup $? "$WORK/dup.log" -)
echo "ok   SIGTERM twice within 2 s: one stop request, stopped after $k epochs"

# --- ranks that cannot reach a boundary within --stop-grace end the job, with one line (a signal during
# a load that takes longer than the grace)
GCNLAB_INJECT_SIGNAL=0:load:USR1 timeout 60 "$MPIEXEC" -np 2 "$GCNLAB" train --algo 1d --epochs 2 --stop-grace 1 \
  --dataset rmat:scale=17,edge-factor=16,features=16,classes=4,seed=1 >"$WORK/grace.log" 2>&1
rc=$?
{ [ "$rc" -ne 0 ] && [ "$rc" -ne 75 ] && [ "$rc" -ne 124 ]; } || fail "grace: exit status $rc"
[ "$(grep -c 'gcnlab: error: the run did not stop within --stop-grace' "$WORK/grace.log")" -eq 1 ] &&
  [ "$(grep -c 'gcnlab:' "$WORK/grace.log")" -eq 1 ] || { cat "$WORK/grace.log"; fail "grace: not one line"; }
echo "ok   no boundary within --stop-grace 1: the job ended with status $rc and one line"

# --- without --checkpoint: partial results, marked stopped, and the line says it cannot resume
GCNLAB_INJECT_SIGNAL=0:4:USR1 "$MPIEXEC" -np 2 "$GCNLAB" train --algo 1d "${MODEL[@]}" --out "$WORK/nock.json" \
  >"$WORK/nock.log" 2>&1
k=$(check_stopped nock $? "$WORK/nock.log" -)
grep -q "without --checkpoint: the run cannot resume" "$WORK/nock.log" || fail "nock: the line"
echo "ok   without --checkpoint: stopped after $k epochs, results marked stopped"

# --- --resume auto on a finished run: exit 0 in one line, results untouched; written from the checkpoint
# when missing; a stop never replaces complete results
ck=$WORK/usr1-done-ck
fin=(train --algo 1d --dataset "$DATA" --epochs 6 --hidden 32 --seed 3 --checkpoint "$ck" --resume auto)
"$MPIEXEC" -np 2 "$GCNLAB" "${fin[@]}" --out "$WORK/fin.json" 2>"$WORK/log" || fail "finished: first run"
before=$(md5sum <"$WORK/fin.json")
"$MPIEXEC" -np 2 "$GCNLAB" "${fin[@]}" --out "$WORK/fin.json" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "finished: rerun exit status"; }
[ "$(md5sum <"$WORK/fin.json")" = "$before" ] || fail "finished: the rerun changed the results"
grep -q "gcnlab: the run already finished: checkpoint $ck/epoch-000006 is at epoch 6 of --epochs 6; its results" \
  "$WORK/log" || { cat "$WORK/log"; fail "finished: the line"; }
[ "$(grep -c . "$WORK/log")" -eq 1 ] || { cat "$WORK/log"; fail "finished: more than one line"; }
expect_error 2 "its model dims is [32,32,32,6], this run's is [32,16,16,6]" train --algo 1d --dataset "$DATA" \
  --epochs 6 --hidden 16 --seed 3 --checkpoint "$ck" --resume auto --out "$WORK/fin.json"
expect_error 2 "its model variant is \"gcn\", this run's is \"scalegnn\"" train --algo plexus-3d --dataset "$DATA" \
  --epochs 6 --hidden 32 --seed 3 --model scalegnn --layers 1 --permutation none --checkpoint "$ck" --resume auto \
  --out "$WORK/fin.json"
[ "$(md5sum <"$WORK/fin.json")" = "$before" ] || fail "finished: a refused rerun changed the results"
mv "$WORK/fin.json" "$WORK/fin-first.json"
echo partial >"$WORK/fin.json.tmp-4000000"  # what a writer killed mid-write leaves (no such process)
"$MPIEXEC" -np 4 "$GCNLAB" train --algo 2d --dataset "$DATA" --epochs 6 --hidden 32 --seed 3 --checkpoint "$ck" \
  --resume auto --out "$WORK/fin.json" 2>"$WORK/log" || fail "finished: rerun with the results missing"
cmp -s "$WORK/fin.json" "$WORK/fin-first.json" || fail "finished: the results written from the checkpoint differ"
grep -q "results written to $WORK/fin.json from the checkpoint" "$WORK/log" || fail "finished: the written line"
[ ! -e "$WORK/fin.json.tmp-4000000" ] || fail "finished: a killed writer's temporary file is still there"
echo "ok   --resume auto on a finished run: exit 0, results untouched, or written from the checkpoint"

# --- a checkpoint write on a full disk: one error, no staging directory, the previous checkpoint resumes
small=$WORK/small
mkdir -p "$small"
if mount -t tmpfs -o size=400k tmpfs "$small" 2>/dev/null; then
  trap 'umount "$small" 2>/dev/null; rm -rf "$WORK"' EXIT
  FULL=(train --algo 1d --dataset "$DATA" --epochs 6 --hidden 128 --seed 3 --checkpoint "$small/ck"
        --checkpoint-every 1 --resume auto)
  timeout 60 "$MPIEXEC" -np 2 "$GCNLAB" "${FULL[@]}" >/dev/null 2>"$WORK/full.log"
  rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "full disk: exit status $rc"
  [ "$(grep -c 'gcnlab: error' "$WORK/full.log")" -eq 1 ] || { cat "$WORK/full.log"; fail "full disk: one error line"; }
  left=$(ls -A "$small/ck")
  echo "$left" | grep -q "tmp-" && fail "full disk: staging left: $left"
  last=$(ls "$small/ck" | tail -1)
  [ -n "$last" ] || fail "full disk: no checkpoint fits at all (make the tmpfs larger)"
  cp -r "$small/ck" "$WORK/ck-after-full"
  umount "$small"
  "$MPIEXEC" -np 2 "$GCNLAB" train --algo 1d --dataset "$DATA" --epochs 6 --hidden 128 --seed 3 \
    --resume "$WORK/ck-after-full" 2>"$WORK/log" >/dev/null || { cat "$WORK/log"; fail "full disk: resume"; }
  echo "ok   full disk: $(grep 'gcnlab: error' "$WORK/full.log" | cut -c1-100)...; left: $left; resumed"
else
  echo "skip full disk: cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)"
fi
finish

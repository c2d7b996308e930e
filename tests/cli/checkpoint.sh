#!/usr/bin/env bash
# Checkpoint, fault and resume through the command line (issue 16):
#  - a rank that fails mid-epoch (GCNLAB_INJECT_FAULT) ends the whole job within
#    seconds with one error line, leaving the last checkpoints and an existing
#    --out file as they were;
#  - the same command with --resume auto continues from the newest checkpoint
#    and ends bitwise equal to the uninterrupted run (every epoch's loss, final W);
#  - the 4-rank 1d checkpoint resumes under plexus-3d on 8 ranks and serial on 1,
#    within the equivalence tolerance;
#  - learned features (--learn-features) are checkpointed row-distributed and resume the same ways;
#  - bad checkpoints and flags are one clear error, and change nothing on disk.
source "$(dirname "$0")/lib.sh"
DATA="sbm:nodes=1500,classes=6,avg-degree=10,features=24,seed=5"
COMMON=(--dropout 0.5 --weight-decay 5e-4 --seed 3)
MODEL=(--dataset "$DATA" --epochs 8 --hidden 16 "${COMMON[@]}")

"$MPIEXEC" -np 4 "$GCNLAB" train --algo 1d "${MODEL[@]}" --out "$WORK/full.json" --weights-out "$WORK/full-w" \
  2>"$WORK/log" || { cat "$WORK/log"; fail "uninterrupted run"; }

# --- killed mid-epoch 5 on rank 2: checkpoints at 2 and 4 survive, the old --out survives
echo '{"old": true}' >"$WORK/out.json"
start=$(date +%s)
GCNLAB_INJECT_FAULT=2:5 timeout 60 "$MPIEXEC" -np 4 "$GCNLAB" train --algo 1d "${MODEL[@]}" --checkpoint "$WORK/ck" \
  --checkpoint-every 2 --resume auto --out "$WORK/out.json" >/dev/null 2>"$WORK/fault.log"
rc=$?
elapsed=$(($(date +%s) - start))
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then fail "faulted run: exit code $rc"; fi
[ "$elapsed" -le 30 ] || fail "faulted run took $elapsed s to end"
[ "$(grep -c 'gcnlab: error: injected fault' "$WORK/fault.log")" -eq 1 ] || { cat "$WORK/fault.log"; fail "fault: one error line"; }
[ "$(ls "$WORK/ck")" = "$(printf 'epoch-000002\nepoch-000004')" ] || { ls -a "$WORK/ck"; fail "checkpoints after the fault"; }
grep -q '"old": true' "$WORK/out.json" || fail "the faulted run touched --out"
cp -r "$WORK/ck" "$WORK/at-fault"
echo "ok   fault on rank 2 in epoch 5: exit $rc after ${elapsed} s, checkpoints $(ls "$WORK/ck" | tr '\n' ' ')"

# --- the same command resumes at epoch 4 and ends where the uninterrupted run ended
"$MPIEXEC" -np 4 "$GCNLAB" train --algo 1d "${MODEL[@]}" --checkpoint "$WORK/ck" --checkpoint-every 2 --resume auto \
  --out "$WORK/resumed.json" --weights-out "$WORK/resumed-w" 2>"$WORK/log" || { cat "$WORK/log"; fail "resume auto"; }
grep -q "resuming at epoch 4 from $WORK/ck/epoch-000004 (written by 1d on 4 rank(s))" "$WORK/log" || { cat "$WORK/log"; fail "resume message"; }
for l in 0 1 2; do
  cmp -s "$WORK/full-w/final/W$l.npy" "$WORK/resumed-w/final/W$l.npy" || fail "resumed W$l differs from the uninterrupted run"
done

# --- the 4-rank 1d checkpoint under plexus-3d on 8 ranks and serial on 1
"$MPIEXEC" -np 8 "$GCNLAB" train --algo plexus-3d "${MODEL[@]}" --resume "$WORK/at-fault/epoch-000004" \
  --out "$WORK/plexus.json" 2>"$WORK/log" || { cat "$WORK/log"; fail "resume under plexus-3d"; }
"$GCNLAB" train --algo serial "${MODEL[@]}" --resume "$WORK/at-fault" --out "$WORK/serial.json" \
  2>"$WORK/log" || { cat "$WORK/log"; fail "resume under serial"; }

# check_resumed PREFIX NAME...: WORK/PREFIXfull.json's uninterrupted epochs against each resumed run
# WORK/PREFIX<NAME>.json (the 4-rank 1d checkpoint of epoch 4): its results hold the whole history, epochs
# 0-3 of segment 0 (1d on 4 ranks, from the checkpoint) and 4-7 of segment 1 (this run), and where it
# resumed from; the first NAME equal bitwise, the others within the equivalence tolerance (relative 1e-4)
check_resumed() {
  "$PYTHON" - "$WORK" "$@" <<'PY'
import json, sys
work, prefix, names = sys.argv[1], sys.argv[2], sys.argv[3:]
full = {e["epoch"]: e["loss"] for e in json.load(open(f"{work}/{prefix}full.json"))["epochs"]}
ok = True
for name in names:
    exact = name == names[0]
    r = json.load(open(f"{work}/{prefix}{name}.json"))
    epochs = [(e["epoch"], e["segment"]) for e in r["epochs"]]
    rf = r["config"]["resumed_from"]
    seg = [(s["segment"], s["first_epoch"], s["algo"], s["ranks"]) for s in r["segments"]]
    if epochs != [(e, int(e >= 4)) for e in range(8)] or rf["epoch"] != 4 or rf["run"]["algo"] != "1d" or \
            rf["run"]["ranks"] != 4 or seg != [(0, 0, "1d", 4), (1, 4, r["config"]["algo"], r["config"]["ranks"])]:
        print(f"{name}: epochs {epochs}, segments {seg}, resumed_from {rf}"); ok = False
    worst = max(abs(e["loss"] - full[e["epoch"]]) / abs(full[e["epoch"]]) for e in r["epochs"])
    if (worst != 0) if exact else (worst > 1e-4):
        print(f"{name}: loss off by {worst:.3g} (relative)"); ok = False
    print(f"{prefix}{name:8s} ({r['config']['algo']} on {r['config']['ranks']} rank(s), grid {r['config']['grid']}): "
          f"final loss {r['epochs'][-1]['loss']:.9f} vs {full[7]:.9f}, largest relative difference {worst:.2g} "
          f"({'bitwise' if exact else 'rel 1e-4'})")
sys.exit(0 if ok else 1)
PY
}
check_resumed "" resumed plexus serial || fail "resumed runs"

# --- learned features (--learn-features): X and its Adam moments written row-distributed (each rank its
# rows of X.npy); the faulted run resumes bitwise on the same layout, and under other strategies and rank
# counts (other row and column blocks of X) within the equivalence tolerance
LF=(--dataset "$DATA" --epochs 8 --hidden 16 "${COMMON[@]}" --learn-features)
"$MPIEXEC" -np 4 "$GCNLAB" train --algo 1d "${LF[@]}" --out "$WORK/lf-full.json" --weights-out "$WORK/lf-full-w" \
  2>"$WORK/log" || { cat "$WORK/log"; fail "learned features: uninterrupted run"; }
GCNLAB_INJECT_FAULT=2:5 timeout 60 "$MPIEXEC" -np 4 "$GCNLAB" train --algo 1d "${LF[@]}" --checkpoint "$WORK/lf-ck" \
  --checkpoint-every 2 --resume auto >/dev/null 2>"$WORK/fault.log"
[ "$(ls "$WORK/lf-ck/epoch-000004")" = "$(printf '%s\n' M0.npy M1.npy M2.npy V0.npy V1.npy V2.npy W0.npy W1.npy W2.npy \
  X.npy XM.npy XV.npy checkpoint.json history.json)" ] || { ls "$WORK/lf-ck/epoch-000004"; fail "learned features: checkpoint files"; }
cp -r "$WORK/lf-ck" "$WORK/lf-at-fault"
"$MPIEXEC" -np 4 "$GCNLAB" train --algo 1d "${LF[@]}" --checkpoint "$WORK/lf-ck" --checkpoint-every 2 --resume auto \
  --out "$WORK/lf-resumed.json" --weights-out "$WORK/lf-resumed-w" 2>"$WORK/log" || { cat "$WORK/log"; fail "lf resume"; }
for l in 0 1 2; do
  cmp -s "$WORK/lf-full-w/final/W$l.npy" "$WORK/lf-resumed-w/final/W$l.npy" || fail "learned features: resumed W$l differs"
done
"$MPIEXEC" -np 8 "$GCNLAB" train --algo plexus-3d "${LF[@]}" --resume "$WORK/lf-at-fault/epoch-000004" \
  --out "$WORK/lf-plexus.json" 2>"$WORK/log" || { cat "$WORK/log"; fail "lf resume under plexus-3d"; }
"$MPIEXEC" -np 4 "$GCNLAB" train --algo 2d "${LF[@]}" --resume "$WORK/lf-at-fault/epoch-000004" \
  --out "$WORK/lf-2d.json" 2>"$WORK/log" || { cat "$WORK/log"; fail "lf resume under 2d"; }
"$GCNLAB" train --algo serial "${LF[@]}" --resume "$WORK/lf-at-fault" --out "$WORK/lf-serial.json" \
  2>"$WORK/log" || { cat "$WORK/log"; fail "lf resume under serial"; }
check_resumed lf- resumed plexus 2d serial || fail "learned features: resumed runs"  # a resume without X: ~5e-3
expect_error 2 "its model learn_features is true, this run's is false" train --algo 1d --dataset "$DATA" --epochs 9 \
  --hidden 16 "${COMMON[@]}" --resume "$WORK/lf-at-fault"
truncate -s -4 "$WORK/lf-at-fault/epoch-000004/XM.npy"
expect_error 2 "XM.npy' is" train --algo 1d "${LF[@]}" --resume "$WORK/lf-at-fault/epoch-000004"

# --- bad checkpoints and flags: one error line, nothing on disk changed
snapshot() { (cd "$WORK" && find ck out.json -type f -exec md5sum {} + | sort); }
before=$(snapshot)
expect_error 2 "does not exist" train --algo 1d "${MODEL[@]}" --resume "$WORK/nowhere" --out "$WORK/out.json"
expect_error 2 "its model dims is [24,16,16,6], this run's is [24,32,32,6]" train --algo 1d --dataset "$DATA" \
  --epochs 9 --hidden 32 "${COMMON[@]}" --resume "$WORK/ck" --out "$WORK/out.json"
expect_error 2 "its model lr is" train --algo 1d --dataset "$DATA" --epochs 9 --hidden 16 "${COMMON[@]}" --lr 0.02 \
  --resume "$WORK/ck" --out "$WORK/out.json"
expect_error 2 "its dataset fingerprint is" train --algo 1d --dataset "${DATA/seed=5/seed=6}" --epochs 9 --hidden 16 \
  "${COMMON[@]}" --resume "$WORK/ck" --out "$WORK/out.json"
expect_error 2 "is at epoch 8, past --epochs 6: nothing to run" train --algo 1d --dataset "$DATA" --epochs 6 \
  --hidden 16 "${COMMON[@]}" --resume "$WORK/ck"
expect_error 2 "--checkpoint-every needs --checkpoint DIR" train --algo 1d "${MODEL[@]}" --checkpoint-every 2
expect_error 2 "--resume auto needs --checkpoint DIR" train --algo 1d "${MODEL[@]}" --resume auto
GCNLAB_INJECT_FAULT=soon expect_error 1 "GCNLAB_INJECT_FAULT takes RANK:EPOCH" train --algo serial "${MODEL[@]}"
[ "$(snapshot)" = "$before" ] || fail "a refused resume changed the checkpoints or --out"
cp -r "$WORK/ck" "$WORK/damaged"
truncate -s -7 "$WORK/damaged/epoch-000008/W1.npy"
expect_error 2 "W1.npy' is" train --algo 1d --dataset "$DATA" --epochs 9 --hidden 16 "${COMMON[@]}" \
  --resume "$WORK/damaged"
finish

#!/usr/bin/env bash
# A partial error in any setup phase of train ends every rank (issue 33): an
# error injected on one rank of four (GCNLAB_INJECT_FAULT=RANK:PHASE, at the
# start of the phase) ends the job within 10 s with exactly one error line and a
# non-zero exit, for every phase start_train runs (apps/gcnlab/commands.cpp) and
# the first epoch; the strategies whose setup splits communicators (2d,
# plexus-3d) and reads halos (sa-1d) too. A phase agreed on before the next
# collective ends at once; a fault inside a phase's own collectives (setup) ends
# by the agreement's deadline (5 s) with MPI_Abort. A damaged shard read by one
# rank alone is one line too.
source "$(dirname "$0")/lib.sh"
DATA="sbm:nodes=600,classes=4,avg-degree=8,features=16,seed=3"
RUN=(train --hidden 16 --quiet)

"$MPIEXEC" -np 4 "$GCNLAB" "${RUN[@]}" --dataset "$DATA" --algo 1d --epochs 2 --checkpoint "$WORK/ck" --weights-out "$WORK/w" \
  2>"$WORK/log" >/dev/null || { cat "$WORK/log"; fail "the run the faults resume"; }

# expect_fault ALGO PHASE ARGS...: rank 2 of 4 fails in PHASE
expect_fault() {
  local algo=$1 phase=$2
  shift 2
  local start elapsed rc lines
  start=$(date +%s%N)
  GCNLAB_INJECT_FAULT="2:$phase" timeout 60 "$MPIEXEC" -np 4 "$GCNLAB" "${RUN[@]}" --dataset "$DATA" --algo "$algo" "$@" \
    >/dev/null 2>"$WORK/fault.log"
  rc=$?
  elapsed=$((($(date +%s%N) - start) / 1000000))
  lines=$(grep -c "gcnlab: error: injected fault (GCNLAB_INJECT_FAULT) on rank 2 in" "$WORK/fault.log")
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
    fail "$algo, fault in $phase: exit code $rc"
  elif [ "$elapsed" -gt 10000 ]; then
    fail "$algo, fault in $phase: took $elapsed ms to end every rank"
  elif [ "$lines" -ne 1 ] || [ "$(grep -c 'gcnlab: error' "$WORK/fault.log")" -ne 1 ]; then
    fail "$algo, fault in $phase: not one error line"; cat "$WORK/fault.log"
  else
    local how="at once"
    [ "$elapsed" -ge 5000 ] && how="by the agreement's deadline"
    printf 'ok   %-10s fault on rank 2 in %-10s: exit %s after %5d ms (%s)\n' "$algo" "$phase" "$rc" "$elapsed" "$how"
  fi
}

RESUME=(--resume "$WORK/ck" --epochs 3)
for phase in arguments checkpoint backend admission load strategy partition setup restore; do
  expect_fault 1d "$phase" "${RESUME[@]}"
done
expect_fault 1d weights --weights-in "$WORK/w/initial" --epochs 2
expect_fault 1d 0 --epochs 2  # the first epoch, between its forward and backward pass
for algo in 2d plexus-3d sa-1d; do
  for phase in strategy partition setup; do expect_fault "$algo" "$phase" --epochs 2; done
done

# a shard that only rank 2's block reads, damaged
"$GCNLAB" prepare --dataset "$DATA" --shards 4x4 --out "$WORK/prep" --quiet 2>/dev/null || fail "prepare"
truncate -s -5 "$WORK/prep/adj-0-0-2-1.bin"
for algo in 1d 2d; do
  expect_error 4 "adj-0-0-2-1.bin' is truncated or corrupt" "${RUN[@]}" --algo "$algo" --dataset "gcl:$WORK/prep" --epochs 2
done
GCNLAB_INJECT_FAULT=1:loading expect_error 2 "no setup phase 'loading'" "${RUN[@]}" --dataset "$DATA" --algo 1d --epochs 1
finish

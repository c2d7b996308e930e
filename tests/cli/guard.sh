#!/usr/bin/env bash
# The MPI test main's divergence guard (tests/support/catch_main.cpp): a REQUIRE
# that fails on one rank only ends the whole job in seconds with the failure
# printed, instead of leaving the other ranks in a collective until the ctest
# timeout.
source "$(dirname "$0")/lib.sh"
TEST_UNIT=$(dirname "$GCNLAB")/tests/test_unit
[ -x "$TEST_UNIT" ] || { echo "skip: $TEST_UNIT not built"; exit 77; }

start=$(date +%s)
timeout 60 "$MPIEXEC" -np 3 "$TEST_UNIT" "[.guard]" >"$WORK/out" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
if [ "$rc" -eq 124 ]; then
  fail "the divergent test hung (timeout)"
elif [ "$rc" -eq 0 ]; then
  fail "the divergent test passed"
else
  echo "ok   exit $rc after ${elapsed} s"
fi
[ "$elapsed" -lt 30 ] || fail "took ${elapsed} s (>= 30 s)"
grep -q "rank 2: REQUIRE failed at .*test_comm.cpp" "$WORK/out" || { cat "$WORK/out"; fail "no failure line naming rank 2"; }
grep -q "aborting the job" "$WORK/out" || fail "no abort notice"
finish

# Shared helpers for the command-line tests. The test registration
# (cmake/GcnlabTesting.cmake) provides GCNLAB, MPIEXEC, PYTHON and the
# OpenMPI environment.
set -u
: "${GCNLAB:?run through ctest}" "${MPIEXEC:?run through ctest}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_error NP PATTERN ARGS... : gcnlab exits non-zero within 60 s, prints
# exactly one "gcnlab: error:" line, and that line contains PATTERN. Open MPI's
# launcher, told that a rank exited non-zero, waits odls_base_sigkill_timeout
# (1 s) between its SIGTERM and SIGKILL to the job, twice on one rank (2.4 s
# against 0.4 s here): 0 for these runs, which end by themselves.
expect_error() {
  local np=$1 pattern=$2
  shift 2
  local out="$WORK/stderr" rc
  OMPI_MCA_odls_base_sigkill_timeout=0 timeout 60 "$MPIEXEC" -np "$np" "$GCNLAB" "$@" >/dev/null 2>"$out"
  rc=$?
  local lines
  lines=$(grep -c "gcnlab: error:" "$out")
  if [ "$rc" -eq 124 ]; then
    fail "np=$np gcnlab $*: timed out (hang)"
  elif [ "$rc" -eq 0 ]; then
    fail "np=$np gcnlab $*: exit code 0"
  elif [ "$lines" -ne 1 ]; then
    fail "np=$np gcnlab $*: $lines error lines"; cat "$out"
  elif ! grep "gcnlab: error:" "$out" | grep -qF -- "$pattern"; then
    fail "np=$np gcnlab $*: message does not mention '$pattern':"; grep "gcnlab: error:" "$out"
  else
    echo "ok   np=$np $(grep 'gcnlab: error:' "$out")"
  fi
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "all checks passed"
}

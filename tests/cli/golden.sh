#!/usr/bin/env bash
# The golden results (tests/golden/golden.py): a fixed set of short runs of every strategy, whose losses
# (bit for bit where the runs' signature is the file's: the compiler and the BLAS kernels, on any x86-64
# host and -march level), per-rank bytes and analytic memory must not move. An argument names another
# gcnlab to check against the same file (golden_portable: the x86-64-v2 build). An intended change
# regenerates them: (cd build && GCNLAB_GOLDEN_UPDATE=1 ctest -R 'golden$')
source "$(dirname "$0")/lib.sh"
binary=${1:-$GCNLAB}
[ -x "$binary" ] || { fail "no gcnlab at $binary"; finish; }
if [ $# -gt 0 ] && [ -n "${GCNLAB_GOLDEN_UPDATE:-}" ]; then
  echo "golden: GCNLAB_GOLDEN_UPDATE rewrites the file from the default build only (ctest -R 'golden$')"
  exit 77
fi
"$PYTHON" "$GCNLAB_SOURCE_DIR/tests/golden/golden.py" --gcnlab "$binary" --mpiexec "$MPIEXEC" ||
  fail "the golden results moved ($binary)"
finish

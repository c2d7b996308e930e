#!/usr/bin/env bash
# The golden results (tests/golden/golden.py): a fixed set of short runs of every strategy, whose losses
# (bit for bit on the build that wrote them), per-rank bytes and analytic memory must not move. An
# intended change regenerates them: (cd build && GCNLAB_GOLDEN_UPDATE=1 ctest -R golden)
source "$(dirname "$0")/lib.sh"
"$PYTHON" "$GCNLAB_SOURCE_DIR/tests/golden/golden.py" --gcnlab "$GCNLAB" --mpiexec "$MPIEXEC" ||
  fail "the golden results moved"
finish

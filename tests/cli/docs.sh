#!/usr/bin/env bash
# The docs, checked against the code (tests/docs/check_docs.py): relative links
# resolve, every documented flag is one the parser accepts and every flag is
# documented, every strategy has a row, and the blocks marked runnable run.
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
"$PYTHON" "$root/tests/docs/check_docs.py" --root "$root" --gcnlab "$GCNLAB" || fail "the docs disagree with the code"
finish

#!/usr/bin/env bash
# `gcnlab prepare` across ranks (issue 75, partitioners/prepare_ranks.hpp): the
# directory P ranks write is the one a single process writes, byte for byte
# (cmp of every file, meta.json and its fingerprint included), at each rank
# count given (default 2 3 4; the sweep label adds 8). R-MAT undirected and
# directed, K that no P divides, K = 1 (ranks without a row block), rounds of
# a few draws (many exchange rounds, and ranks with none left to draw).
# A text edge list (byte ranges) likewise. Then bad input at P > 1: one error
# line, a non-zero exit, no directory.
source "$(dirname "$0")/lib.sh"
RANKS=${*:-2 3 4}

same_dirs() {  # same_dirs A B: the same file names, each file identical
  local a=$1 b=$2 f
  if [ "$(cd "$a" && ls)" != "$(cd "$b" && ls)" ]; then
    echo "files differ: $(cd "$a" && ls | tr '\n' ' ') / $(cd "$b" && ls | tr '\n' ' ')"
    return 1
  fi
  for f in "$a"/*; do cmp -s "$f" "$b/$(basename "$f")" || { echo "$(basename "$f") differs"; return 1; }; done
}

check() {  # check NAME SPEC K [ROUND [LAYOUT...]]
  local name=$1 spec=$2 k=$3 round=${4:-262144} np
  shift 4 2>/dev/null || shift $#
  local layout=("$@")
  "$MPIEXEC" -np 1 "$GCNLAB" prepare --dataset "$spec" --shards "${k}x$k" "${layout[@]}" --out "$WORK/$name-1" --quiet \
    >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; fail "$name: prepare in one process"; return; }
  for np in $RANKS; do
    rm -rf "$WORK/$name-$np"
    if ! timeout 300 "$MPIEXEC" -np "$np" "$GCNLAB" prepare --dataset "$spec" --shards "${k}x$k" "${layout[@]}" \
      --round "$round" --out "$WORK/$name-$np" --quiet >/dev/null 2>"$WORK/err"; then
      cat "$WORK/err"; fail "$name: prepare at $np ranks"; continue
    fi
    grep -q "prepared by $np ranks" "$WORK/err" || { cat "$WORK/err"; fail "$name: $np ranks did not prepare across ranks"; }
    if same_dirs "$WORK/$name-1" "$WORK/$name-$np"; then echo "ok   $name: $np ranks = 1 process"
    else fail "$name: the directory written by $np ranks differs"; fi
  done
}

check undirected "rmat:scale=10,features=8,seed=2" 3 700
check directed "rmat:scale=9,edge-factor=8,features=4,classes=5,directed=1,seed=3" 5 300
check one-block "rmat:scale=8,features=4" 1
check many-blocks "rmat:scale=11,edge-factor=4,features=4" 16
# Other layouts: the orderings computed on every rank, the rows moved to their positions' owners.
check random "rmat:scale=10,features=8,seed=2" 3 700 --partitioner random
check single "rmat:scale=10,features=8" 4 900 --permutation single
check random-double "rmat:scale=9,edge-factor=8,features=4,directed=1,seed=3" 5 300 --partitioner random \
  --permutation double
check double-balanced "rmat:scale=10,features=8" 3 262144 --permutation double-balanced

# A text edge list read by byte ranges: comments, blank lines, CRLF, a third column; n found by a scan, or given.
"$PYTHON" - "$WORK/el.txt" <<'PY'
import random, sys
random.seed(5)
with open(sys.argv[1], "w") as f:
    f.write("# u v weight\n")
    for i in range(20000):
        u, v = random.randrange(3000), random.randrange(3000)
        f.write(f"{u}\t{v}\r\n" if i % 7 == 0 else f"{u} {v} 1.5\n")
        if i % 1000 == 0:
            f.write("% a comment\n\n")
PY
check edges "edges:$WORK/el.txt,features=8" 4 3000
check edges-directed "edges:$WORK/el.txt,features=8,nodes=3100,directed=1" 3 2000 --partitioner random \
  --permutation single

# Bad input across ranks: every rank reports it, one line, nothing written.
# In the part of the file that only the last of 3 ranks reads: an id out of range, a truncated line.
cp "$WORK/el.txt" "$WORK/out-of-range.txt" && echo "5 99999" >>"$WORK/out-of-range.txt"
expect_error 3 "vertex id 99999 is out of range (3100 vertices" prepare \
  --dataset "edges:$WORK/out-of-range.txt,nodes=3100" --shards 2x2 --out "$WORK/bad-id"
[ -e "$WORK/bad-id" ] && fail "an id out of range: a directory was written"
cp "$WORK/el.txt" "$WORK/truncated.txt" && printf '17' >>"$WORK/truncated.txt"
expect_error 3 "malformed edge '17'" prepare --dataset "edges:$WORK/truncated.txt" --shards 2x2 --out "$WORK/bad-line"
[ -e "$WORK/bad-line" ] && fail "a truncated line: a directory was written"
expect_error 3 "cannot cut 512 vertices into 600 blocks" prepare --dataset "rmat:scale=9,features=4" \
  --shards 600x600 --out "$WORK/bad-k"
[ -e "$WORK/bad-k" ] && fail "--shards 600x600: a directory was written"
expect_error 3 "has no training vertices" prepare --dataset "rmat:scale=1,edge-factor=1,features=4,seed=2" \
  --shards 1x1 --out "$WORK/bad-split"
[ -e "$WORK/bad-split" ] && fail "no training vertices: a directory was written"
# A rank that cannot write (the destination is a file) ends the job with one line.
touch "$WORK/a-file"
expect_error 2 "cannot create directory" prepare --dataset "rmat:scale=9,features=4" --shards 2x2 \
  --out "$WORK/a-file"
finish

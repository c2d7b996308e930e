#!/usr/bin/env bash
# `gcnlab prepare` across ranks (issue 75, partitioners/prepare_ranks.hpp): the
# directory P ranks write is the one a single process writes, byte for byte
# (cmp of every file, meta.json and its fingerprint included), at each rank
# count given (default 2 3 4; the sweep label adds 8). R-MAT undirected and
# directed, K that no P divides, K = 1 (ranks without a row block), rounds of
# a few draws (many exchange rounds, and ranks with none left to draw).
# A text edge list (byte ranges), Matrix Market files, SBM and OGB
# directories (csv and npz forms) likewise, gzip files streamed by rank 0, partitioned layouts
# (--parts K; PT-Scotch against its own partition as a file). Then bad input at P > 1: one error line, a
# non-zero exit, no directory.
source "$(dirname "$0")/lib.sh"
RANKS=${*:-${PREPARE_RANKS:-2 3 4}}  # PREPARE_RANKS: the ASan stage runs one count (.ci/run)

same_dirs() {  # same_dirs A B [KEY...]: the same file names, each file identical
  # The one field that may differ is a measured time: meta.json's partition.seconds (with --parts K), and the
  # meta.json keys named (layout.partitioner: a partition given as a file). meta.json is then compared as JSON.
  local a=$1 b=$2 f
  shift 2
  if [ "$(cd "$a" && ls)" != "$(cd "$b" && ls)" ]; then
    echo "files differ: $(cd "$a" && ls | tr '\n' ' ') / $(cd "$b" && ls | tr '\n' ' ')"
    return 1
  fi
  for f in "$a"/*; do
    cmp -s "$f" "$b/$(basename "$f")" && continue
    if [ "$(basename "$f")" = meta.json ] && grep -q '"partition": {' "$f" && "$PYTHON" - "$f" "$b/meta.json" "$@" <<'PY'
import json, sys
def facts(path):
    m = json.load(open(path))
    m["partition"].pop("seconds")
    for key in sys.argv[3:]:
        section, name = key.split(".")
        m[section].pop(name)
    return m
sys.exit(facts(sys.argv[1]) != facts(sys.argv[2]))
PY
    then continue; fi
    echo "$(basename "$f") differs"; return 1
  done
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

# Partitioned layouts (--parts K) from every vertex's row length: block, block-nnz (prefix sums), random.
check parts-block "rmat:scale=10,features=8,seed=2" 4 700 --partitioner block --parts 4
check parts-nnz "rmat:scale=10,features=8,seed=2" 4 700 --partitioner block-nnz --parts 3 --permutation single
check parts-random "rmat:scale=9,edge-factor=8,features=4,directed=1,seed=3" 5 300 --partitioner random --parts 5 \
  --permutation double

# Matrix Market read by byte ranges after the size line: symmetric (pattern), general of symmetric structure
# (undirected, as loaded), general (directed); comments, CRLF, values; and gzip files streamed by rank 0.
"$PYTHON" - "$WORK" <<'PY'
import random, sys
random.seed(3)
n, entries = 2500, set()
while len(entries) < 15000:
    entries.add((random.randrange(1, n + 1), random.randrange(1, n + 1)))
lower = sorted({(max(u, v), min(u, v)) for u, v in entries})
both = sorted(set(lower) | {(v, u) for u, v in lower})
random.shuffle(both)
for name, symmetry, field, rows in [("sym", "symmetric", "pattern", lower), ("gensym", "general", "real", both),
                                    ("dir", "general", "integer", sorted(entries))]:
    with open(f"{sys.argv[1]}/{name}.mtx", "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate {field} {symmetry}\n% comment\n%\n{n} {n} {len(rows)}\n")
        for i, (u, v) in enumerate(rows):
            if i % 500 == 0:
                f.write("% a comment\n\n")
            value = "" if field == "pattern" else f" {random.random():.3f}"
            f.write(f"{u} {v}{value}" + ("\r\n" if i % 9 == 0 else "\n"))
PY
gzip -k "$WORK/dir.mtx" "$WORK/el.txt"
check mtx-symmetric "mtx:$WORK/sym.mtx,features=8" 3 2000 --partitioner random --permutation double
check mtx-general-symmetric "mtx:$WORK/gensym.mtx,features=8" 4 3000
check mtx-directed "mtx:$WORK/dir.mtx,features=8" 5 1500 --partitioner block-nnz --parts 5 --permutation single
check mtx-gzip "mtx:$WORK/dir.mtx.gz,features=8" 3 2000
check edges-gzip "edges:$WORK/el.txt.gz,features=8" 4 3000 --partitioner random --permutation double-balanced

# SBM: its draws need the classes' member lists (built on every rank); its labels and split are given per vertex.
check sbm "sbm:nodes=3000,classes=5,avg-degree=10,features=8,seed=4" 4 700 --partitioner random --permutation double
check sbm-directed "sbm:nodes=2000,avg-degree=7,directed=1,intra=0.5,train=0.3" 3 500 --partitioner block-nnz \
  --parts 3

# An OGB directory (csv.gz form): vertex data read by rank 0 and broadcast, the edge list streamed, the stored
# features streamed into x.bin; labels with nan, num-node-list.
"$PYTHON" - "$WORK/ogb" <<'PY'
import gzip, os, random, sys
random.seed(7)
d, n = sys.argv[1], 1500
os.makedirs(f"{d}/raw"), os.makedirs(f"{d}/split/time")
def write(path, text):
    with gzip.open(f"{d}/{path}", "wt") as f:
        f.write(text)
write("raw/edge.csv.gz", "".join(f"{random.randrange(n)},{random.randrange(n)}\n" for _ in range(9000)))
write("raw/node-feat.csv.gz", "".join(",".join(f"{random.uniform(-1, 1):.4f}" for _ in range(6)) + "\n" for _ in range(n)))
labels = [random.randrange(7) if v % 11 else None for v in range(n)]
write("raw/node-label.csv.gz", "".join(("nan" if y is None else str(y)) + "\n" for y in labels))
write("raw/num-node-list.csv.gz", f"{n}\n")
labeled = [v for v in range(n) if labels[v] is not None]
random.shuffle(labeled)
for name, part in [("train", labeled[:600]), ("valid", labeled[600:800]), ("test", labeled[800:1000])]:
    write(f"split/time/{name}.csv.gz", "".join(f"{v}\n" for v in part))
PY
check ogb "ogb:$WORK/ogb" 4 1000
check ogb-directed "ogb:$WORK/ogb,directed=1" 3 2000 --partitioner random --permutation double

# OGB's npz form (numpy's own archives): a stored edge_index read by element ranges on every rank, a deflated one
# inflated in order by rank 0 (C order: two cursors; Fortran order: one, on pairs); float32 and float16 features.
"$PYTHON" - "$WORK" <<'PY'
import gzip, os, shutil, sys
import numpy as np
work, n, edges = sys.argv[1], 1500, 9000
rng = np.random.default_rng(5)
labels = [line.strip() for line in gzip.open(f"{work}/ogb/raw/node-label.csv.gz", "rt")]
y = np.array([[np.nan if l == "nan" else float(l)] for l in labels])
for name, save, fortran, ftype in [("npz-stored", np.savez, False, np.float32),
                                   ("npz-deflated", np.savez_compressed, False, np.float32),
                                   ("npz-fortran", np.savez_compressed, True, np.float16)]:
    d = f"{work}/{name}"
    os.makedirs(f"{d}/raw")
    shutil.copytree(f"{work}/ogb/split", f"{d}/split")
    ei = np.stack([rng.integers(0, n, edges), rng.integers(0, n, edges)]).astype(np.int64)
    if name == "npz-stored":
        ei[1, -1] = n  # the last edge: out of range, in the part the last rank reads (npz-bad)
        bad = ei.copy()
        ei[1, -1] = 0
    save(f"{d}/raw/data.npz", edge_index=np.asfortranarray(ei) if fortran else ei,
         node_feat=rng.uniform(-1, 1, (n, 6)).astype(ftype), num_nodes_list=np.array([n]))
    save(f"{d}/raw/node-label.npz", node_label=y)
shutil.copytree(f"{work}/npz-stored", f"{work}/npz-bad")
np.savez(f"{work}/npz-bad/raw/data.npz", edge_index=bad, node_feat=np.zeros((n, 6), np.float32))
PY
check npz-stored "ogb:$WORK/npz-stored" 4 1000 --partitioner random --permutation single
check npz-deflated "ogb:$WORK/npz-deflated,directed=1" 3 2000
check npz-fortran "ogb:$WORK/npz-fortran" 5 1500 --partitioner block-nnz --parts 3

# PT-Scotch lays the graph out on the ranks' rows (its partition depends on P, so it is not compared with one
# process): the directory is the one a single process writes from the same partition given as a file, but for
# the partitioner's name; and that file, with a permutation on top, is prepared across ranks as by one process.
for np in $RANKS; do
  rm -rf "$WORK"/scotch-$np "$WORK"/file-$np-*
  timeout 300 "$MPIEXEC" -np "$np" "$GCNLAB" prepare --dataset "rmat:scale=11,features=8" --shards 4x4 \
    --partitioner ptscotch --parts 4 --round 2000 --out "$WORK/scotch-$np" --quiet >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err"; fail "ptscotch at $np ranks"; continue; }
  "$PYTHON" - "$WORK/scotch-$np" "$WORK/parts-$np.txt" <<'PY'
import array, json, sys
meta = json.load(open(f"{sys.argv[1]}/meta.json"))
order, blocks = array.array("q", open(f"{sys.argv[1]}/order0.bin", "rb").read()), meta["layout"]["blocks"]
part = [0] * len(order)
for k in range(meta["layout"]["parts"]):
    for v in order[blocks[k]:blocks[k + 1]]:
        part[v] = k
assert meta["partition"]["parts"] == 4 and len(set(part)) == 4, meta["partition"]
open(sys.argv[2], "w").write("".join(f"{k}\n" for k in part))
PY
  for run in "1 none" "1 single" "$np single"; do
    set -- $run
    "$MPIEXEC" -np "$1" "$GCNLAB" prepare --dataset "rmat:scale=11,features=8" --shards 4x4 --round 2000 \
      --partitioner "$WORK/parts-$np.txt" --parts 4 --permutation "$2" --out "$WORK/file-$np-$1-$2" --quiet \
      >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; fail "a PT-Scotch partition file at $1 ranks"; }
  done
  if same_dirs "$WORK/scotch-$np" "$WORK/file-$np-1-none" layout.partitioner &&
     same_dirs "$WORK/file-$np-$np-single" "$WORK/file-$np-1-single"; then
    echo "ok   ptscotch at $np ranks: the layout of its partition, as one process writes it from the file"
  else fail "ptscotch at $np ranks: the directory differs from its partition's"; fi
done

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
# Matrix Market: an index out of range in the last rank's part; fewer entries than declared; a gzip stream's bad line.
cp "$WORK/dir.mtx" "$WORK/bad.mtx" && sed -i '4s/ 15000$/ 15001/' "$WORK/bad.mtx" && echo "5 99999 1" >>"$WORK/bad.mtx"
expect_error 3 "index (5, 99999) out of range 1..2500" prepare --dataset "mtx:$WORK/bad.mtx" --shards 2x2 \
  --out "$WORK/bad-mtx"
[ -e "$WORK/bad-mtx" ] && fail "a Matrix Market index out of range: a directory was written"
sed -i '4s/ 15000$/ 15004/' "$WORK/dir.mtx"
expect_error 3 "15004 entries declared but 15000 found" prepare --dataset "mtx:$WORK/dir.mtx" --shards 2x2 \
  --out "$WORK/bad-count"
[ -e "$WORK/bad-count" ] && fail "fewer Matrix Market entries than declared: a directory was written"
gzip -c "$WORK/truncated.txt" >"$WORK/truncated.txt.gz"
expect_error 3 "line 20042: malformed edge '17'" prepare --dataset "edges:$WORK/truncated.txt.gz" --shards 2x2 \
  --out "$WORK/bad-gzip"
[ -e "$WORK/bad-gzip" ] && fail "a gzip edge list's bad line: a directory was written"
# OGB: an edge out of range (its streamed edge list), a malformed feature, a split vertex without a label.
cp -r "$WORK/ogb" "$WORK/ogb-edge" && (zcat "$WORK/ogb/raw/edge.csv.gz"; echo "3,1500") | gzip >"$WORK/ogb-edge/raw/edge.csv.gz"
expect_error 3 "line 9001: vertex id 1500 is out of range (1500 vertices" prepare --dataset "ogb:$WORK/ogb-edge" \
  --shards 2x2 --out "$WORK/bad-ogb-edge"
cp -r "$WORK/ogb" "$WORK/ogb-feat" && (zcat "$WORK/ogb/raw/node-feat.csv.gz" | sed '700s/,/,x/') | gzip \
  >"$WORK/ogb-feat/raw/node-feat.csv.gz"
expect_error 3 "line 700: malformed feature value in column 2" prepare --dataset "ogb:$WORK/ogb-feat" --shards 2x2 \
  --out "$WORK/bad-ogb-feat"
cp -r "$WORK/ogb" "$WORK/ogb-label" && (zcat "$WORK/ogb/raw/node-label.csv.gz" | sed '1s/.*/nan/') | gzip \
  >"$WORK/ogb-label/raw/node-label.csv.gz" && echo 0 | gzip >"$WORK/ogb-label/split/time/valid.csv.gz"
expect_error 3 "vertex 0 is in a train/val/test split but has no label" prepare --dataset "ogb:$WORK/ogb-label" \
  --shards 2x2 --out "$WORK/bad-ogb-label"
expect_error 3 "edge 8999 names vertex 1500, out of range [0, 1500)" prepare --dataset "ogb:$WORK/npz-bad" \
  --shards 2x2 --out "$WORK/bad-npz"
for d in bad-ogb-edge bad-ogb-feat bad-ogb-label bad-npz; do [ -e "$WORK/$d" ] && fail "$d: a directory was written"; done
# METIS needs the whole graph: refused at P > 1, naming the alternatives.
expect_error 2 "--partitioner metis needs the whole graph in one process" prepare --dataset "rmat:scale=9,features=4" \
  --shards 2x2 --partitioner metis --parts 2 --out "$WORK/bad-metis"
# A rank that cannot write (the destination is a file) ends the job with one line.
touch "$WORK/a-file"
expect_error 2 "cannot create directory" prepare --dataset "rmat:scale=9,features=4" --shards 2x2 \
  --out "$WORK/a-file"
finish

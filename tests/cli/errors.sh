#!/usr/bin/env bash
# Every bad input gives one "gcnlab: error: ..." line naming the problem and a
# non-zero exit, within a timeout, on 1 and on 4 ranks (docs/design.md principle 6).
source "$(dirname "$0")/lib.sh"

mtx() { printf '%s' "$2" > "$WORK/$1"; echo "$WORK/$1"; }
bad_header=$(mtx h.mtx $'%%MatrixMarket matrix coordinate real\n3 3 1\n1 2 1\n')
bad_count=$(mtx c.mtx $'%%MatrixMarket matrix coordinate real general\n3 3 4\n1 2 1\n')
bad_index=$(mtx i.mtx $'%%MatrixMarket matrix coordinate real general\n3 3 1\n1 7 1\n')
bad_value=$(mtx v.mtx $'%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 x\n')

# gcl files with bad vertex data, written from a valid one
"$GCNLAB" prepare --dataset "sbm:nodes=50,classes=3,avg-degree=4,features=4,seed=1" --out "$WORK/ok.gcl" 2>/dev/null
"$PYTHON" - "$WORK" <<'PY'
import json, struct, sys, numpy as np
work = sys.argv[1]
raw = open(f"{work}/ok.gcl", "rb").read()
hlen = struct.unpack("<Q", raw[8:16])[0]
header = json.loads(raw[16:16 + hlen])
n, nnz, f = header["nodes"], header["nnz"], header["features"]
off = 16 + hlen
rowptr = raw[off:off + 8 * (n + 1)]; off += 8 * (n + 1)
cols = raw[off:off + 8 * nnz]; off += 8 * nnz
labels = np.frombuffer(raw[off:off + 4 * n], dtype="<i4").copy(); off += 4 * n
split = raw[off:off + n]
def write(name, header, x, labels):
    h = json.dumps(header).encode()
    with open(f"{work}/{name}", "wb") as out:
        out.write(raw[:8] + struct.pack("<Q", len(h)) + h + rowptr + cols)
        if x is not None: out.write(x.astype("<f4").tobytes())
        out.write(labels.astype("<i4").tobytes() + split)
bad = labels.copy(); bad[7] = 42
write("label.gcl", header, None, bad)
stored = dict(header, synthetic_features=False)
x = np.ones((n, f)); x[2, 3] = np.nan
write("nan.gcl", stored, x, labels)
PY

# truncated Planetoid copy, when the real files are available
planetoid=""
if [ -n "${GCNLAB_DATA_DIR:-}" ]; then
  mkdir -p "$WORK/planetoid"
  cp "$GCNLAB_DATA_DIR"/planetoid/ind.cora.* "$WORK/planetoid/"
  chmod u+w "$WORK"/planetoid/*
  truncate -s 1000 "$WORK/planetoid/ind.cora.allx"
  planetoid="planetoid:$WORK/planetoid/cora"
fi

for np in 1 4; do
  T=(train --algo 1d --epochs 2)
  expect_error $np "cannot open" "${T[@]}" --dataset mtx:"$WORK/missing.mtx"
  expect_error $np "line 1" "${T[@]}" --dataset mtx:"$bad_header"
  expect_error $np "4 entries declared but 1 found" "${T[@]}" --dataset mtx:"$bad_count"
  expect_error $np "out of range" "${T[@]}" --dataset mtx:"$bad_index"
  expect_error $np "non-numeric" "${T[@]}" --dataset mtx:"$bad_value"
  expect_error $np "label 42 of vertex 7 is out of range" "${T[@]}" --dataset gcl:"$WORK/label.gcl"
  expect_error $np "feature (2, 3) is nan" "${T[@]}" --dataset gcl:"$WORK/nan.gcl"
  [ -n "$planetoid" ] && expect_error $np "truncated" "${T[@]}" --dataset "$planetoid"
  expect_error $np "unknown --algo 'nope'" train --algo nope
  expect_error $np "needs --algo" train
  expect_error $np "unknown or misplaced argument '--bogus'" "${T[@]}" --bogus
  expect_error $np "--epochs '1x' is not an integer" train --algo 1d --epochs 1x
  expect_error $np "--dropout must be in [0, 1)" "${T[@]}" --dropout 1.5
  expect_error $np "unknown dataset kind" "${T[@]}" --dataset foo:bar
  expect_error $np "unknown command 'trian'" trian
  expect_error $np "built without CUDA" "${T[@]}" --backend cuda
  expect_error $np "--gpu-comm mpi needs --backend cuda" "${T[@]}" --gpu-comm mpi
  expect_error $np "--gpu-comm: ucx not in {nccl,mpi}" "${T[@]}" --backend cuda --gpu-comm ucx
  expect_error $np "--gpu-comm nccl needs --backend cuda" bench collective --gpu-comm nccl
  expect_error $np "--sizes '1X' is not a size" bench collective --sizes 4K,1X
  expect_error $np "--sizes takes sizes of at least 1 byte" bench collective --sizes 0
  expect_error $np "built without CUDA" bench collective --backend cuda
done
expect_error 4 "--grid P with P = 4" train --algo 1d --grid 3
expect_error 4 "grid" train --algo 1d --grid 2x0
expect_error 4 "serial runs on one rank" train --algo serial
expect_error 4 "grid 3x2 has 6 processes but the job has 4 ranks" train --algo 2d --grid 3x2
expect_error 4 "--algo 2d needs --grid RxC" train --algo 2d --grid 2x2x1
expect_error 4 "--grid '2x0x2' has a dimension < 1" train --algo split-3d --grid 2x0x2
expect_error 4 "--algo split-3d needs --grid XxYxZ" train --algo split-3d --grid 4
expect_error 4 "--replication 3 does not divide the 4 ranks" train --algo 1.5d --replication 3
expect_error 4 "grid 3x2 has 6 processes" train --algo 1.5d --grid 3x2
expect_error 2 "cannot cut 1 vertices into 2 non-empty parts" train --algo 1d --dataset "sbm:nodes=1,classes=1,avg-degree=0,features=2,train=1"

# partition files: wrong length, a part id >= K, an empty part; K > n
SMALL="sbm:nodes=10,classes=2,avg-degree=2,features=3,seed=1,train=0.5"
printf '0\n1\n0\n' > "$WORK/short.part"
printf '0\n1\n0\n1\n0\n1\n0\n1\n0\n4\n' > "$WORK/big.part"
printf '0\n0\n0\n0\n0\n0\n0\n0\n0\n0\n' > "$WORK/empty.part"
expect_error 2 "has 3 entries but the graph has 10 vertices" train --algo 1d --dataset "$SMALL" --partitioner "$WORK/short.part"
expect_error 2 "part 4 is not in 0..1" train --algo 1d --dataset "$SMALL" --partitioner "$WORK/big.part"
expect_error 2 "part 1 is empty" train --algo 1d --dataset "$SMALL" --partitioner "$WORK/empty.part"
expect_error 1 "cannot cut 10 vertices into 11 non-empty parts" partition --dataset "$SMALL" --parts 11 --method metis
expect_error 1 "unknown --partitioner 'nope'" partition --dataset "$SMALL" --parts 2 --method nope
expect_error 4 "ptscotch: 11 parts of 10 vertices" partition --dataset "$SMALL" --parts 11 --method ptscotch
"$MPIEXEC" -np 1 "$GCNLAB" prepare --dataset "$SMALL" --shards 2x2 --out "$WORK/prep" --quiet >/dev/null 2>&1
expect_error 2 "--method metis partitions a graph one process holds whole" partition --dataset "gcl:$WORK/prep" --parts 2 --method metis

# --model scalegnn: where it runs
expect_error 4 "--model scalegnn (input projection, RMSNorm, residuals: ScaleGNN Sec. III) runs on serial, plexus-3d and scalegnn-4d" train --algo 1d --model scalegnn --dataset "$SMALL"
expect_error 1 "--model: nope not in {gcn,scalegnn,sage,gin,gat}" train --algo serial --model nope --dataset "$SMALL"
expect_error 4 "--model scalegnn moves a layer's input rows into its output's layout (residuals, root terms) in one vertex ordering" train --algo plexus-3d --model scalegnn --permutation double --dataset "$SMALL"
expect_error 1 "--model sage (GraphSAGE convolutions) trains on the full graph" train --algo serial --model sage --batch-size 4 --dataset "$SMALL"
expect_error 4 "--model sage moves a layer's input rows into its output's layout (residuals, root terms) in one vertex ordering" train --algo plexus-3d --model sage --permutation single --dataset "$SMALL"
# --model gin: its own flags, its fixed order, full graph only
expect_error 2 "--train-eps is for --model gin; --model sage has no such setting" train --algo 1d --model sage --train-eps --dataset "$SMALL"
expect_error 2 "--gin-eps is for --model gin; --model gcn has no such setting" train --algo 1d --gin-eps 0.5 --dataset "$SMALL"
expect_error 2 "--order is for the plain GCN's convolutions; --model gin fixes its product order" train --algo 1d --model gin --order transform --dataset "$SMALL"
expect_error 1 "--model gin (GIN convolutions) trains on the full graph" train --algo serial --model gin --batch-size 4 --dataset "$SMALL"
# --model gat: its own flags, the strategies that lay out attention, full graph only
expect_error 2 "--heads is for --model gat; --model gin has no such setting" train --algo 1d --model gin --heads 2 --dataset "$SMALL"
expect_error 1 "--attention-dropout must be in [0, 1)" train --algo serial --model gat --attention-dropout 1 --dataset "$SMALL"
expect_error 2 "--concat is for --model gat; --model sage has no such setting" train --algo 1d --model sage --concat off --dataset "$SMALL"
expect_error 2 "--output-heads is for --model gat; --model gcn has no such setting" train --algo 1d --output-heads 2 --dataset "$SMALL"
expect_error 1 "--output-heads must be >= 1" train --algo serial --model gat --output-heads 0 --dataset "$SMALL"
expect_error 2 "--model gat (graph attention) trains on the full graph; --algo scalegnn-4d trains on mini-batches only" train --algo scalegnn-4d --grid 1x2x1x1 --batch-size 8 --model gat --dataset "$SMALL"
expect_error 2 "--model gat under plexus-3d moves each layer's scores d from its sources' rows to its targets' rows in one vertex ordering: --permutation none or single (got double)" train --algo plexus-3d --grid 2x1x1 --permutation double --model gat --dataset "$SMALL"
expect_error 2 "--model gat under plexus-3d runs Plexus's GCN-specific options at their defaults" train --algo plexus-3d --grid 1x2x1 --agg-blocks 2 --model gat --dataset "$SMALL"
expect_error 2 "plan --model gat simulates its ranks as threads: run it without mpirun" plan --model gat --dataset "$SMALL" --ranks 4
expect_error 1 "--order is for the plain GCN's convolutions; --model gat fixes its product order" train --algo serial --model gat --order aggregate --dataset "$SMALL"

# plexus-3d and its planner
"$MPIEXEC" -np 1 "$GCNLAB" train --algo 1d --dataset "$SMALL" --epochs 1 --out "$WORK/run1d.json" >/dev/null 2>&1
"$MPIEXEC" -np 1 "$GCNLAB" train --algo plexus-3d --dataset "$SMALL" --epochs 1 --out "$WORK/runp.json" >/dev/null 2>&1
expect_error 4 "--algo plexus-3d needs --grid XxYxZ" train --algo plexus-3d --grid 2x2
expect_error 4 "grid 2x2x2 has 8 processes but the job has 4 ranks" train --algo plexus-3d --grid 2x2x2
expect_error 2 "unknown --permutation 'triple'" train --algo plexus-3d --dataset "$SMALL" --permutation triple
expect_error 2 "--agg-blocks" train --algo plexus-3d --dataset "$SMALL" --agg-blocks 0
expect_error 2 "--grid auto is for plexus-3d" train --algo 1d --grid auto --dataset "$SMALL"
expect_error 2 "--overlap: maybe not in {on,off}" train --algo mggcn-1d --dataset "$SMALL" --overlap maybe
expect_error 4 "--algo mggcn-1d needs --grid P with P = 4" train --algo mggcn-1d --grid 2x2
expect_error 2 "neither a built-in profile" train --algo plexus-3d --grid auto --machine "$WORK/none.json" --dataset "$SMALL"
expect_error 4 "cannot cut 3 vertices into 4 non-empty parts" train --algo plexus-3d --grid 4x1x1 --dataset "sbm:nodes=3,classes=1,avg-degree=1,features=2,train=1"
expect_error 1 "plan needs --ranks G" plan --dataset "$SMALL"
expect_error 1 "plan needs --dataset SPEC" plan --ranks 4
echo '{"schema": "something/1"}' > "$WORK/notrun.json"
echo '{"name": "x", "gpus_per_node": 4, "intra_bandwidth": 1e9, "inter_bandwidth": 1e9, "k_flops": 0, "k_fwd": 0, "k_bwd": 0}' \
  > "$WORK/norates.json"
expect_error 1 "is not a gcnlab results file" plan --validate "$WORK/notrun.json"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); [x.pop("work") for x in r["per_rank"]]; json.dump(r, open(sys.argv[2], "w"))' \
  "$WORK/run1d.json" "$WORK/nowork.json"
expect_error 1 "has no per-rank kernel work (written before gcnlab counted it): rerun it" plan --calibrate "$WORK/nowork.json" --out "$WORK/p.json"
expect_error 1 "'scalegnn-4d' is not one" plan --algo scalegnn-4d --dataset "$SMALL" --ranks 4
expect_error 1 "machine profile 'x' has no rate for spmm kernels, which this model's epoch runs" plan --algo 1d --dataset "$SMALL" --ranks 4 --machine "$WORK/norates.json"
expect_error 1 "plan simulates at most 4096 ranks" plan --algo 1d --dataset "$SMALL" --ranks 5000
expect_error 2 "run it without mpirun" plan --algo 1d --dataset "$SMALL" --ranks 4
expect_error 1 "no grid of 4 ranks is accepted by 2d" plan --algo 2d --ranks 4 --dataset "sbm:nodes=1,classes=1,avg-degree=0,features=2,train=1"
expect_error 1 "--shards takes RxC" info --dataset "$SMALL" --shards 8
# memory admission: the need by part and the budget, before any activation or vertex data is allocated
expect_error 4 "rank 0 needs 4.4 MiB (analytic: graph 0.2, buffers 0.5, activations 3.5" train --algo 1d --dataset sbm:nodes=8000,classes=4,avg-degree=8,features=64 \
  --hidden 64 --memory-limit 2M
expect_error 1 "but has 2.0 MiB (--memory-limit)" train --algo serial --dataset sbm:nodes=8000,classes=4,avg-degree=8,features=64 \
  --hidden 64 --memory-limit 2M
# admission before loading (issue 33): from the spec's facts, before anything graph-sized is allocated
# (was std::bad_alloc); the need per rank and the budget in one sentence, in about a second
printf '0 1\n1 2\n' >"$WORK/three.edges"
for spec in rmat:scale=40 "edges:$WORK/three.edges,nodes=1000000000000"; do
  start=$(date +%s%N)
  expect_error 2 "vertices need at least" train --algo 1d --dataset "$spec" --memory-limit 8G
  elapsed=$((($(date +%s%N) - start) / 1000000))
  [ "$elapsed" -lt 5000 ] || fail "admission of $spec took $elapsed ms"
  echo "     ($elapsed ms, mpirun included)"
done
expect_error 1 "TiB per rank to load (every rank holds the whole graph's row offsets, labels and split) but a rank has 8.0 GiB (--memory-limit)" \
  train --algo 1d --dataset rmat:scale=40 --memory-limit 8G
expect_error 2 "cannot be trained on 2 rank(s) here: its 100000000 vertices need at least 24.1 GiB per rank (each vertex's 128 input features" \
  train --algo 1d --dataset "edges:$WORK/three.edges,nodes=100000000" --memory-limit 8G
expect_error 2 "--memory-limit 'lots' is not a size" train --algo 1d --dataset "$SMALL" --memory-limit lots

# usage mistakes exit 2 on every rank (one line); --version; every subcommand's --help exits 0
for np in 1 4; do
  timeout 60 "$MPIEXEC" -np $np "$GCNLAB" train --algo 1d --bogus >/dev/null 2>"$WORK/usage.err"
  rc=$?
  [ $rc -eq 2 ] || fail "np=$np: a usage mistake exited $rc, not 2"
  [ "$(grep -c 'gcnlab: error:' "$WORK/usage.err")" -eq 1 ] || { cat "$WORK/usage.err"; fail "np=$np: usage error lines"; }
done
expect_error 1 "--optimizer: adamw not in {adam,sgd}" train --algo 1d --optimizer adamw
expect_error 1 "--config: cannot open" train --config "$WORK/none.json"
"$GCNLAB" --version | grep -q "^gcnlab [0-9.]* (git " || fail "--version"
# OpenBLAS's kernels (backends/cpu/blas_kernels.hpp): the user's OPENBLAS_CORETYPE is kept; unset, a CPU with
# AVX2 and FMA runs kernels that use them, on 1 rank and under mpiexec (gcnlab re-executes itself where
# OpenBLAS took older ones for a CPU it does not know)
OPENBLAS_CORETYPE=Core2 "$GCNLAB" --version | grep -qx "blas kernels: Core2 (OPENBLAS_CORETYPE)" ||
  fail "--version: OPENBLAS_CORETYPE=Core2 not kept"
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  for launch in "" "$MPIEXEC -np 2"; do
    kernels=$(env -u OPENBLAS_CORETYPE $launch "$GCNLAB" --version | sed -n 's/^blas kernels: //p')
    echo "$kernels" | grep -qE "^(Haswell|Zen|SkylakeX|Cooperlake|SapphireRapids|Excavator) " ||
      fail "${launch:-1 rank}: a CPU with AVX2 runs OpenBLAS kernels '$kernels'"
  done
fi
# the CPU's GEMM library (backends/cpu/sgemm.hpp): oneDNN unless GCNLAB_CPU_GEMM=openblas; any other
# value ends every rank with one line
env -u GCNLAB_CPU_GEMM "$GCNLAB" --version | grep -qE "^cpu gemm: oneDNN [0-9]+\.[0-9]+\.[0-9]+ \(" ||
  fail "--version: oneDNN is not the CPU's GEMM by default"
GCNLAB_CPU_GEMM=openblas "$GCNLAB" --version | grep -q "^cpu gemm: OpenBLAS (" ||
  fail "--version: GCNLAB_CPU_GEMM=openblas not kept"
export GCNLAB_CPU_GEMM=mkl
for np in 1 2; do
  expect_error $np "GCNLAB_CPU_GEMM=mkl: not a GEMM library (onednn, the default, or openblas)" \
    train --algo 1d --epochs 1 --dataset gcl:"$WORK/ok.gcl"
done
unset GCNLAB_CPU_GEMM
"$GCNLAB" --help | grep -q "gcnlab COMMAND --help" || fail "gcnlab --help"
for cmd in train info prepare partition compare plan simulate bench; do
  "$GCNLAB" $cmd --help >"$WORK/help-$cmd" 2>&1 || { cat "$WORK/help-$cmd"; fail "gcnlab $cmd --help exited non-zero"; }
  grep -q "^Usage: gcnlab $cmd" "$WORK/help-$cmd" || fail "gcnlab $cmd --help: no usage line"
done
# every option a --help lists is one the parser accepts (help and parser come from one table): all of a
# command's options at once (a value of the right kind each) plus one unknown option, which must be the
# only complaint
"$PYTHON" - "$GCNLAB" "$WORK" <<'PY' || fail "--help lists an option the parser rejects"
import re, subprocess, sys
gcnlab, work = sys.argv[1], sys.argv[2]
for cmd in ["train", "info", "prepare", "partition", "compare", "plan", "simulate", "bench"]:
    argv, names = [gcnlab, cmd], []
    for line in open(f"{work}/help-{cmd}"):
        m = re.match(r"^  (--[a-z][a-z0-9-]*)(?: (\S+))?(?:\s+|$)", line.rstrip("\n"))
        if not m or m.group(1) in ("--help", "--config"):  # --config reads its file before the parse
            continue
        names.append(m.group(1))
        argv.append(m.group(1))
        if m.group(2):  # a value: the first of its choices, else a number
            choices = re.search(r":\{([^,}]*)", m.group(2))
            argv.append(choices.group(1) if choices else "1")
    assert len(names) >= 2, (cmd, names)
    err = subprocess.run(argv + ["--zz-not-an-option"], capture_output=True, text=True).stderr
    lines = [l for l in err.splitlines() if "gcnlab: error:" in l]
    assert len(lines) == 1 and "'--zz-not-an-option'" in lines[0], (cmd, err)
    print(f"ok   gcnlab {cmd}: {len(names)} options in --help, all accepted")
PY
grep -q -- "--comm-precision P:{fp32,bf16}" "$WORK/help-train" || fail "train --help: choices"
grep -q "dataset SPEC:" "$WORK/help-train" || fail "train --help: the dataset specs"
finish

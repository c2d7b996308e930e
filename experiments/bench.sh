#!/usr/bin/env bash
# Local kernel and epoch benchmarks, gcnlab beside its references, in one run:
#   - SpMM: gcnlab's kernel, the plain OpenMP row loop and torch.sparse.mm
#   - GEMM and the element-wise passes at 1 and T threads
#   - a serial training epoch (dropout 0 and 0.5) against the same GCN in
#     plain PyTorch (experiments/bench_pytorch.py) at the same thread counts
# Every measurement is one key=value line in OUT/bench.txt; OUT/summary.md is
# the README's table, computed from those lines. What is compared is
# interleaved: gcnlab's kernels and the row loop within one bench call, and the
# epochs as R repetitions of (gcnlab, PyTorch) one after the other, each ratio
# taken within its repetition and reported as median (min-max). gcnlab adds
# repetitions until a figure settles and flags one whose spread stays over 10 %
# (bench=warning); the summary lists them, with the CPU and OpenBLAS core type.
#
#   experiments/bench.sh [--dataset SPEC] [--threads T] [--out DIR] [--quick]
#
# Default dataset: R-MAT scale 18 (262 144 vertices, 7.9 M nonzeros with
# self-loops), 128 features, 32 classes; model 128-128-128-32. PyTorch is
# optional (Debian: apt-get install python3-torch); without it those rows are
# skipped with a note.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
gcnlab=${GCNLAB:-$root/build/gcnlab}
dataset="rmat:scale=18,edge-factor=16,features=128,classes=32,seed=1"
threads=$(nproc)
out=$root/results/bench
reps=10
epochs=5
rounds=5  # interleaved repetitions of the epoch comparison
while [ $# -gt 0 ]; do
  case $1 in
    --dataset) dataset=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quick) reps=3; epochs=2; rounds=3; shift ;;
    *) echo "usage: experiments/bench.sh [--dataset SPEC] [--threads T] [--out DIR] [--quick]" >&2; exit 2 ;;
  esac
done
[ -x "$gcnlab" ] || { echo "bench: $gcnlab not built (bash scripts/build.sh)" >&2; exit 1; }
# PyTorch runs the OpenBLAS kernels gcnlab runs
source "$root/experiments/blas_kernels.sh"
mkdir -p "$out"
log=$out/bench.txt
: > "$log"

# One file for both programs: gcnlab's own binary format, read by the PyTorch script too.
gcl=$out/dataset.gcl
"$gcnlab" prepare --dataset "$dataset" --out "$gcl" 2>&1 | tail -1
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
model=(--layers 3 --hidden 128 --epochs $((epochs + 1)) --no-eval)  # the first epoch is untimed

# PyTorch from Debian; PyG in the venv experiments/setup_pyg.sh makes over it (both optional)
py=/usr/bin/python3
[ -x "$root/.venv-pyg/bin/python" ] && py=$root/.venv-pyg/bin/python
have_torch=0 have_pyg=0
if "$py" -c "import torch" 2>/dev/null; then have_torch=1; else
  echo "bench: PyTorch not installed (apt-get install python3-torch): its rows are skipped" | tee -a "$out/notes.txt"
fi
if "$py" -c "import torch_geometric" 2>/dev/null; then have_pyg=1; elif [ $have_torch = 1 ]; then
  echo "bench: PyTorch Geometric not installed (bash experiments/setup_pyg.sh): its rows are skipped" | tee -a "$out/notes.txt"
fi

thread_counts=(1)
[ "$threads" -gt 1 ] && thread_counts+=("$threads")
for t in "${thread_counts[@]}"; do
  echo "== $t thread(s)"
  "$gcnlab" bench spmm --dataset "gcl:$gcl" --f 16,64,128 --threads "$t" --reps "$reps" | tee -a "$log"
  "$gcnlab" bench gemm --dataset "gcl:$gcl" --f 128 --threads "$t" --reps "$reps" | tee -a "$log"
  "$gcnlab" bench elementwise --dataset "gcl:$gcl" --f 128,32 --threads "$t" --reps "$reps" | tee -a "$log"
  for d in 0 0.5; do
    for k in $(seq "$rounds"); do  # gcnlab, PyTorch, gcnlab, PyTorch, ...
      "$gcnlab" bench epoch --algo serial --dataset "gcl:$gcl" "${model[@]}" --dropout "$d" --threads "$t" \
        | sed "s/$/ round=$k/" | tee -a "$log"
      if [ $have_torch = 1 ]; then
        spmm=""
        [ "$d" = 0 ] && [ "$k" = 1 ] && spmm=16,64,128
        "$py" -W ignore "$root/experiments/bench_pytorch.py" "$gcl" --threads "$t" --dropout "$d" \
          --epochs "$epochs" --reps "$reps" --spmm "$spmm" | sed "s/$/ round=$k/" | tee -a "$log"
      fi
      if [ $have_pyg = 1 ]; then  # GCNConv on a torch.sparse adjacency; on edge_index (slow: dropout 0 only)
        for fw in pyg-sparse pyg-edge-index; do
          [ "$fw" = pyg-edge-index ] && [ "$d" != 0 ] && continue
          "$py" -W ignore "$root/experiments/bench_pytorch.py" "$gcl" --framework "$fw" --threads "$t" --dropout "$d" \
            --epochs "$epochs" --spmm "" | sed "s/$/ round=$k/" | tee -a "$log"
        done
      fi
    done
  done
done
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
# the host's memory bandwidth: a STREAM-style triad a = b + s c on 3 x 256 MiB (numpy, one thread, best of 5)
triad=$(/usr/bin/python3 -c "
import numpy as np, time
n = 1 << 25; b = np.ones(n); c = np.ones(n); a = np.empty(n); best = 1e9
for _ in range(5):
    t = time.perf_counter(); np.multiply(c, 3.0, out=a); np.add(a, b, out=a); best = min(best, time.perf_counter() - t)
print(f'{5 * 8 * n / best / 1e9:.1f}')")  # numpy's two passes read 3 and write 2 arrays of 8-byte values
echo "bench=host cpu=$(echo "$cpu" | tr ' ' '_') gcnlab_gemm=$("$gcnlab" --version | sed -n "s/^cpu gemm: //p" | tr " " "_") openblas_core=$OPENBLAS_CORETYPE cpu_core=$cpu_core cores=$(nproc) triad_gbs=$triad" | tee -a "$log"

/usr/bin/python3 - "$log" "$threads" > "$out/summary.md" <<'EOF'
import re, sys
rows, warned = [], []
for l in open(sys.argv[1]):
    if not l.startswith("bench="):
        continue
    r = dict(kv.split("=", 1) for kv in l.split())
    if r["bench"] == "warning":  # about the figure before it
        if rows and r.get("kind") == "unstable":
            rows[-1]["unstable"] = r["spread"]
            warned.append(rows[-1])
        continue
    rows.append(r)
T = sys.argv[2]
host = next((r for r in rows if r["bench"] == "host"), {})
def get(**want):
    for r in rows:
        if all(r.get(k) == str(v) for k, v in want.items()):
            return r
    return None
def ms(r): return float(r["median_ms"]) if r else float("nan")
out = []
out.append("| measurement | 1 thread | %s threads | speed-up |" % T)
out.append("|---|---|---|---|")
for f in (16, 64, 128):
    for kernel in ("backend", "row-loop", "torch.sparse.mm"):
        a, b = get(bench="spmm", kernel=kernel, f=f, threads=1), get(bench="spmm", kernel=kernel, f=f, threads=T)
        if a or b:
            g = lambda r: f"{float(r['gflops']):.1f} GFLOP/s ({ms(r):.1f} ms)" if r else "-"
            name = {"backend": "gcnlab", "row-loop": "plain row loop", "torch.sparse.mm": "torch.sparse.mm"}[kernel]
            out.append(f"| SpMM f={f}, {name} | {g(a)} | {g(b)} | {ms(a) / ms(b):.2f}x |")
for op in ("T*W", "Xt*U", "U*Wt"):
    a, b = get(bench="gemm", op=op, threads=1), get(bench="gemm", op=op, threads=T)
    if a and b:
        out.append(f"| GEMM {op} (f=128) | {float(a['gflops']):.0f} GFLOP/s | {float(b['gflops']):.0f} GFLOP/s | {ms(a) / ms(b):.2f}x |")
for k in ("relu_dropout", "dropout_relu_backward", "softmax_xent"):
    for f in (128, 32):
        a, b = get(bench="elementwise", kernel=k, f=f, threads=1), get(bench="elementwise", kernel=k, f=f, threads=T)
        if a and b and not (k == "softmax_xent" and f == 128) and not (k != "softmax_xent" and f == 32):
            out.append(f"| {k} (n x {f}) | {ms(a):.1f} ms | {ms(b):.1f} ms | {ms(a) / ms(b):.2f}x |")
def rounds(**want):
    return [r for r in rows if all(r.get(k) == str(v) for k, v in want.items())]
def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else 0.5 * (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) if xs else float("nan")
def spread(xs):  # "median (min-max)" of a figure over the interleaved rounds, flagged beyond 10 %
    if not xs:
        return "-"
    m = med(xs)
    flag = " **unstable**" if (max(xs) - min(xs)) > 0.1 * m else ""
    return f"{m:.2f} ({min(xs):.2f}-{max(xs):.2f}){flag}"
for d in ("0", "0.5"):
    g1, gT = rounds(bench="epoch", algo="serial", dropout=d, threads=1), rounds(bench="epoch", algo="serial", dropout=d, threads=T)
    out.append(f"| epoch ms, gcnlab serial, dropout {d} | {spread([ms(r) for r in g1])} | {spread([ms(r) for r in gT])} | "
               f"{med([ms(r) for r in g1]) / med([ms(r) for r in gT]):.2f}x |")
    # ratios within one round: the programs ran back to back, under the same load
    ratio = lambda p, g: [ms(a) / ms(b) for a in p for b in g if a["round"] == b["round"]]
    for fw, name in (("pytorch", "plain PyTorch"), ("pyg-sparse", "PyG GCNConv, torch.sparse adjacency"),
                     ("pyg-edge-index", "PyG GCNConv, edge_index")):
        p1, pT = rounds(bench="epoch", framework=fw, dropout=d, threads=1), rounds(bench="epoch", framework=fw, dropout=d, threads=T)
        if p1 or pT:
            out.append(f"| epoch ms, {name}, dropout {d} | {spread([ms(r) for r in p1])} | {spread([ms(r) for r in pT])} | |")
            out.append(f"| {name} / gcnlab epoch time, dropout {d} | {spread(ratio(p1, g1))} | {spread(ratio(pT, gT))} | |")
    shares = [r for r in rows if r["bench"] == "epoch-category" and r["dropout"] == d and r["threads"] == T and r.get("round") == "1"]
    ew = sum(float(r["mean_ms"]) for r in shares if r["category"] in ("elementwise", "loss"))
    if shares and gT:
        out.append(f"| element-wise + loss share of the epoch, dropout {d} | | {100 * ew / ms(gT[0]):.1f} % | |")
out.append("")
out.append(f"Host: {host.get('cpu', '?').replace('_', ' ')}, gcnlab's GEMM {host.get('gcnlab_gemm', '?').replace('_', ' ')}, "
           f"OpenBLAS core {host.get('openblas_core', '?')}, "
           f"{host.get('cores', '?')} cores, STREAM-style triad {host.get('triad_gbs', '?')} GB/s (numpy, 1 thread). Epoch figures: median (min-max) over {len(rounds(bench='epoch', algo='serial', dropout='0', threads=1))} "
           "interleaved rounds; a ratio is taken within its round.")
if warned:
    out.append("")
    out.append(f"**{len(warned)} figure(s) unstable** (repetitions spread over 10 % around the median; "
               "the machine was busy — measure again on a quiet one):")
    for r in warned:
        what = " ".join(f"{k}={r[k]}" for k in ("bench", "kernel", "op", "algo", "f", "threads", "dropout", "round") if k in r)
        out.append(f"- {what}: spread {float(r['unstable']):.0%}")
else:
    out.append("")
    out.append("No figure was unstable (every spread within 10 %).")
print("\n".join(out))
EOF
kernels_note >> "$out/summary.md"
echo
cat "$out/summary.md"
echo "bench: lines in $log, table in $out/summary.md"

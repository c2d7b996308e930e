#!/usr/bin/env bash
# Every model's serial training epoch on the CPU, gcnlab beside DGL and
# PyTorch Geometric, interleaved in one run:
#
#   experiments/bench_models.sh [--threads T] [--rounds R] [--epochs E] [--models "gcn sage gin gat"]
#                               [--out DIR] [--scale S] [--gat-scale S]
#
# GCN, GraphSAGE and GIN (learned ε) on R-MAT --scale (17: 131 072 vertices,
# 3.7 M nonzeros), 3 layers x 128; GAT (4 heads x 32) on R-MAT --gat-scale
# (16); 128 features, 32 classes, Adam, no dropout. Each round runs, per model,
# `gcnlab bench epoch` (the median of E epochs after one untimed, and its
# per-category breakdown), with the CPU backend's default GEMM (oneDNN) and
# again with OpenBLAS's (GCNLAB_CPU_GEMM=openblas: the library PyTorch's GEMMs
# run here, with the same kernels), then experiments/bench_pytorch.py's DGL and PyG
# layers (--framework dgl,pyg-sparse; GAT: dgl,pyg-edge-index) on the same
# prepared file, and DGL's again with subnormals flushed to zero (--flush-subnormals:
# gcnlab's CPU backend always flushes them). A ratio is taken within its round; the summary is the median
# and range over the rounds, with the element-wise share of gcnlab's epoch.
# Lines in OUT/bench.txt, the table in OUT/summary.md. DGL and PyG come from
# experiments/setup_pyg.sh (.venv-pyg); without them their columns say so.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
gcnlab=${GCNLAB:-$root/build/gcnlab}
threads=$(nproc) rounds=3 epochs=3 scale=17 gat_scale=16
models="gcn sage gin gat"
out=$root/results/bench-models
while [ $# -gt 0 ]; do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --gat-scale) gat_scale=$2; shift 2 ;;
    *) echo "usage: experiments/bench_models.sh [--threads T] [--rounds R] [--epochs E] [--models LIST] [--out DIR]" \
         "[--scale S] [--gat-scale S]" >&2; exit 2 ;;
  esac
done
[ -x "$gcnlab" ] || { echo "bench_models: $gcnlab not built (bash scripts/build.sh)" >&2; exit 1; }
source "$root/experiments/blas_kernels.sh"  # PyTorch's GEMMs run the OpenBLAS kernels gcnlab's do
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
mkdir -p "$out"
log=$out/bench.txt
: > "$log"
py=/usr/bin/python3
[ -x "$root/.venv-pyg/bin/python" ] && py=$root/.venv-pyg/bin/python
frameworks=()
"$py" -W ignore -c "import sys; sys.path.insert(0, '$root/experiments'); import torch, bench_pytorch; bench_pytorch.import_dgl()" \
  2>/dev/null && frameworks+=(dgl) ||
  echo "bench_models: DGL not installed (bash experiments/setup_pyg.sh): its columns are skipped" | tee -a "$out/notes.txt"
"$py" -c "import torch_geometric" 2>/dev/null && frameworks+=(pyg) ||
  echo "bench_models: PyTorch Geometric not installed (bash experiments/setup_pyg.sh): its columns are skipped" |
  tee -a "$out/notes.txt"

graph() { echo "rmat:scale=$1,edge-factor=16,features=128,classes=32,seed=1"; }
"$gcnlab" prepare --dataset "$(graph "$scale")" --out "$out/graph.gcl" | tail -1
[ "$gat_scale" = "$scale" ] || "$gcnlab" prepare --dataset "$(graph "$gat_scale")" --out "$out/graph-gat.gcl" | tail -1
file_of() { if [ "$1" = gat ] && [ "$gat_scale" != "$scale" ]; then echo "$out/graph-gat.gcl"; else echo "$out/graph.gcl"; fi; }
args_of() {
  case $1 in
    gcn) echo "--model gcn --hidden 128" ;;
    sage) echo "--model sage --hidden 128" ;;
    gin) echo "--model gin --train-eps --hidden 128" ;;
    gat) echo "--model gat --heads 4 --hidden 32" ;;
    *) echo "bench_models: unknown model '$1' (gcn sage gin gat)" >&2; exit 2 ;;
  esac
}
# bench_pytorch.py's epochs of model PM on GCL in round R, logged under gcnlab's model name M; then its options
peers() {
  local gcl=$1 pm=$2 r=$3 m=$4
  shift 4
  "$py" -W ignore "$root/experiments/bench_pytorch.py" "$gcl" --threads "$threads" --epochs "$epochs" --spmm "" \
    --model "$pm" "$@" |
    sed -e "s/ round=[0-9]* / /" -e "s/^bench=epoch /bench=epoch round=$r model_name=$m /" |
    tee -a "$log" | grep -o "framework=[a-z+-]* model=[a-z0-9-]* .*median_ms=[0-9.]*"
}
for r in $(seq "$rounds"); do
  for m in $models; do
    gcl=$(file_of "$m")
    for g in onednn openblas; do
      # shellcheck disable=SC2046
      GCNLAB_CPU_GEMM=$g "$gcnlab" bench epoch --algo serial --dataset "gcl:$gcl" --layers 3 $(args_of "$m") \
        --dropout 0 --epochs $((epochs + 1)) --no-eval --threads "$threads" |
        sed "s/^bench=\([a-z-]*\) /bench=\1 model=$m round=$r gemm=$g /" | tee -a "$log" | grep "bench=epoch "
    done
    fws=()
    for f in "${frameworks[@]}"; do
      case $f in dgl) fws+=(dgl) ;; pyg) [ "$m" = gat ] && fws+=(pyg-edge-index) || fws+=(pyg-sparse) ;; esac
    done
    [ ${#fws[@]} -gt 0 ] || continue
    pm=$m
    [ "$m" = gat ] && pm=gat-4x32
    peers "$gcl" "$pm" "$r" "$m" --framework "$(IFS=,; echo "${fws[*]}")"
    [[ " ${fws[*]} " != *" dgl "* ]] || peers "$gcl" "$pm" "$r" "$m" --framework dgl --flush-subnormals
  done
done
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
echo "bench=host cpu=$(echo "$cpu" | tr ' ' '_') threads=$threads gcnlab_gemm=$("$gcnlab" --version | sed -n "s/^cpu gemm: //p" | tr " " "_") openblas_core=$OPENBLAS_CORETYPE cpu_core=$cpu_core" | tee -a "$log"

/usr/bin/python3 - "$log" > "$out/summary.md" <<'EOF'
import sys
rows = [dict(kv.split("=", 1) for kv in l.split()) for l in open(sys.argv[1]) if l.startswith("bench=")]
host = next((r for r in rows if r["bench"] == "host"), {})
def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else 0.5 * (xs[len(xs) // 2 - 1] + xs[len(xs) // 2])
def spread(xs, digits=2):
    return f"{med(xs):.{digits}f} ({min(xs):.{digits}f}-{max(xs):.{digits}f})" if xs else "-"
names = {"gcn": ("GCN", "GraphConv", "GCNConv, adj_t"), "sage": ("GraphSAGE", "SAGEConv mean", "SAGEConv, adj_t"),
         "gin": ("GIN (learned ε)", "GINConv sum", "GINConv, adj_t"), "gat": ("GAT 4 x 32", "GATConv", "GATConv, edge_index")}
out = ["| model | gcnlab serial ms | DGL ms | DGL / gcnlab | DGL, subnormals flushed, ms | its / gcnlab | PyG ms "
       "| PyG / gcnlab | element-wise share | gcnlab, OpenBLAS GEMM, ms | DGL / it |",
       "|---|---|---|---|---|---|---|---|---|---|---|"]
ours_of = lambda m, g: {r["round"]: float(r["median_ms"]) for r in rows if r["bench"] == "epoch" and r.get("algo")
                        and r["model"] == m and r.get("gemm", "onednn") == g}
kinds = {"dgl": lambda f: f == "dgl", "dgl+ftz": lambda f: f == "dgl+ftz", "pyg": lambda f: f.startswith("pyg")}
for m in dict.fromkeys(r["model"] for r in rows if r["bench"] == "epoch" and "algo" in r):
    ours, openblas = ours_of(m, "onednn"), ours_of(m, "openblas")
    ew = [float(r["share"]) * 100 for r in rows if r["bench"] == "epoch-category" and r["model"] == m
          and r["category"] == "elementwise" and r.get("gemm", "onednn") == "onednn"]
    dgl = {}
    cells = [f"{names[m][0]}", spread(list(ours.values()), 0)]
    for fw, kind in kinds.items():
        theirs = {r["round"]: float(r["median_ms"]) for r in rows if r["bench"] == "epoch" and r.get("model_name") == m
                  and kind(r.get("framework", "")) and "median_ms" in r}
        ratios = [theirs[k] / ours[k] for k in theirs if k in ours]
        label = names[m][2 if fw == "pyg" else 1]
        cells += [f"{spread(list(theirs.values()), 0)} ({label})" if theirs else "-", spread(ratios)]
        dgl = theirs if fw == "dgl" else dgl
    cells.append(f"{spread(ew, 1)} %")
    cells += [spread(list(openblas.values()), 0), spread([dgl[k] / openblas[k] for k in dgl if k in openblas])]
    out.append("| " + " | ".join(cells) + " |")
out += ["", f"Host: {host.get('cpu', '?').replace('_', ' ')}, {host.get('threads', '?')} threads, gcnlab's GEMM "
        f"{host.get('gcnlab_gemm', '?').replace('_', ' ')}, OpenBLAS core "
        f"{host.get('openblas_core', '?')}. Median (min-max) over the interleaved rounds; a ratio is taken within its round. "
        "gcnlab's GEMM is oneDNN's (its default) but in the last two columns, OpenBLAS's, as PyTorch's here."]
print("\n".join(out))
EOF
kernels_note >> "$out/summary.md"
echo
cat "$out/summary.md"
echo "bench_models: lines in $log, table in $out/summary.md"

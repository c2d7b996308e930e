#!/usr/bin/env bash
# The GPU checks (docs/clusters.md, "Verified on a GPU"), in one run on a GPU
# node with the bundle of scripts/bundle.sh:
#   1. versions: GPU, driver, CUDA, NCCL, torch, PyTorch Geometric
#   2. ctest -L gpu in the bundle, its tests side by side (every CUDA kernel against the CPU
#      backend, every strategy on the device against serial on the CPU at 1, 2 and 4 ranks over
#      MPI and, each rank its own NCCL_HOSTID, over NCCL: gpu_np*, gpu_nccl_np*), with the table
#      rows `gpu-table | run | ranks | max rel |loss - serial| | bytes | = model |`
#   3. a checkpoint written on the GPU resumed on the CPU, and back; one written by 4 GPU
#      ranks over each transport (--gpu-comm mpi; nccl in its one-GPU test mode) resumed on 2 CPU ranks
#   4. every multi-rank strategy at 4 ranks over --gpu-comm mpi and nccl (ranks share the GPU where
#      the node has fewer; NCCL then in its test mode, scripts/nccl_host_per_rank.sh), beside the
#      CPU backend's run: loss, epoch time, wire bytes
#   5. gcnlab bench stream and bench spmm on the device (the backend's own copy and axpy: the
#      memory's speed that bench epoch's per-category GB/s are read against; SpMM GFLOP/s, GB/s)
#   6. a GPU epoch of every model, gcnlab serial against PyTorch Geometric's
#      layer on the same GPU (experiments/bench_pytorch.py --model): GCN
#      (GCNConv on torch.sparse and edge_index, and plain PyTorch), GraphSAGE
#      (SAGEConv, adj_t and edge_index), GIN (GINConv, the same MLP, learned ε),
#      GAT 4 heads x 32 concatenated and 8 x 8 with 8 averaged output heads
#      (GATConv, edge_index); R-MAT scale 20 and then 22 (edge factor 16, 128
#      features, 32 classes, 3 layers, Adam, no dropout): gcnlab (11 epochs, the
#      median of 10 with its per-category breakdown), the Python frameworks
#      (--rounds interleaved rounds in one process, the graph read once), gcnlab
#      again
#
#   experiments/gpu_check.sh [--bundle DIR] [--out DIR] [--budget SECONDS] [--scales "20 22"]
#                            [--models "gcn sage gin gat gat8"] [--skip "ctest checkpoint multirank"]
#
# GPU_CHECK_BACKEND=cpu runs the same steps on the CPU (a dry run of the script
# on a machine without a GPU; the Python frameworks then run on the CPU too; the
# NCCL runs are CPU runs through scripts/nccl_host_per_rank.sh).
#
# Every step writes OUT/<step>.txt; a step that fails is reported and the next
# runs. Steps 5's larger scale is skipped when less than its share of
# --budget is left (the lent GPU machines give minutes).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$root/bundle
out=${OUT:-$root/results/gpu}
budget=480
scales="20 22"
models="gcn sage gin gat gat8"
skip=""
rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    --bundle) bundle=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --scales) scales=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: experiments/gpu_check.sh [--bundle DIR] [--out DIR] [--budget S] [--scales LIST] [--models LIST]" \
         "[--skip STEPS] [--rounds R]" >&2; exit 2 ;;
  esac
done
skipped() { case " $skip " in *" $1 "*) echo "== $1 skipped (--skip)"; return 0 ;; esac; return 1; }
# gcnlab's options and bench_pytorch.py's model name for each model of --models
model_args() {
  case $1 in
    gcn) echo "--model gcn --hidden 128" ;;
    sage) echo "--model sage --hidden 128" ;;
    gin) echo "--model gin --train-eps --hidden 128" ;;
    gat) echo "--model gat --heads 4 --hidden 32" ;;
    gat8) echo "--model gat --heads 8 --hidden 8 --output-heads 8" ;;
    *) echo "gpu_check: unknown model '$1' (gcn sage gin gat gat8)" >&2; exit 2 ;;
  esac
}
py_model() { case $1 in gat) echo gat-4x32 ;; gat8) echo gat-8x8-out8 ;; *) echo "$1" ;; esac; }
mkdir -p "$out"
# shellcheck disable=SC1091
source "$bundle/env.sh"
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1 OMP_PROC_BIND=false
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
threads=$(nproc)
backend=${GPU_CHECK_BACKEND:-cuda}
work=$(mktemp -d)
step() { echo "== $1 ($SECONDS s)"; }
left() { echo $((budget - SECONDS)); }

step versions
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  nvcc --version | tail -2
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', '.'.join(map(str, torch.cuda.nccl.version())))"
  python3 -c "import torch_geometric; print('torch_geometric', torch_geometric.__version__)"
  gcnlab --version
  lscpu | grep -E "Model name|^CPU\(s\)"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
} > "$out/versions.txt" 2>&1
cat "$out/versions.txt"

if ! skipped ctest; then
step "ctest -L gpu"
if command -v ctest >/dev/null; then
  # side by side: the node has the cores, and the ranks of each test share the GPU
  (cd "$bundle/tests" && timeout 300 ctest -L gpu -V -j 6 --timeout 290) > "$out/ctest.txt" 2>&1
else  # no CMake on the node: the one-rank test binary itself
  timeout 240 mpiexec -n 1 "$bundle/tests/test_gpu" > "$out/ctest.txt" 2>&1
fi
echo "ctest exit $?"
grep -E "tests passed|Passed|Failed|Skipped|\*\*\*|SKIP" "$out/ctest.txt" | grep -v "^[0-9]*: ok" | tail -15
grep -h "gpu-table" "$out/ctest.txt" | sed 's/^[0-9]*: //' > "$out/table.txt"
cat "$out/table.txt"
fi

if ! skipped checkpoint; then
step "checkpoint: GPU -> CPU -> GPU"
run_on() {  # run_on RANKS ARGS...
  mpiexec -n "$1" gcnlab train --dataset "sbm:nodes=1001,classes=5,avg-degree=6,features=19,seed=4,directed=1" \
    --hidden 13 --dropout 0.5 --weight-decay 5e-4 --threads 1 "${@:2}"
}
run() { run_on 1 "$@"; }
{
  run --algo serial --epochs 6 --out "$work/ref.json" &&
  run --algo 1d --backend "$backend" --epochs 3 --checkpoint "$work/ck1" --checkpoint-every 3 --out "$work/a3.json" &&
  run --algo 1d --backend cpu --epochs 6 --resume "$work/ck1" --out "$work/a6.json" &&
  run --algo serial --backend cpu --epochs 3 --checkpoint "$work/ck2" --checkpoint-every 3 --out "$work/b3.json" &&
  run --algo plexus-3d --backend "$backend" --epochs 6 --resume "$work/ck2" --out "$work/b6.json" &&
  gpu_comm=(); [ "$backend" = cuda ] && gpu_comm=(--gpu-comm mpi)  # 4 ranks may share the node's GPUs
  run_on 4 --algo 1d --backend "$backend" "${gpu_comm[@]}" --epochs 3 --checkpoint "$work/ck3" --checkpoint-every 3 \
    --out "$work/c3.json" &&
  run_on 2 --algo 1d --backend cpu --epochs 6 --resume "$work/ck3" --out "$work/c6.json" &&
  gpu_comm=(); [ "$backend" = cuda ] && gpu_comm=(--gpu-comm nccl)  # in its test mode where ranks share a GPU
  mpiexec -n 4 bash "$root/scripts/nccl_host_per_rank.sh" gcnlab train \
    --dataset "sbm:nodes=1001,classes=5,avg-degree=6,features=19,seed=4,directed=1" --hidden 13 --dropout 0.5 \
    --weight-decay 5e-4 --threads 1 --algo 2d --grid 2x2 --backend "$backend" "${gpu_comm[@]}" --epochs 3 \
    --checkpoint "$work/ck4" --checkpoint-every 3 --out "$work/d3.json" &&
  run_on 2 --algo 1d --backend cpu --epochs 6 --resume "$work/ck4" --out "$work/d6.json" &&
  python3 - "$work" <<'EOF'
import json, sys
w = sys.argv[1]
loss = lambda f: {e["epoch"]: e["loss"] for e in json.load(open(f"{w}/{f}"))["epochs"]}
ref = loss("ref.json")
for name, first, second in (("cuda 1d -> cpu 1d", "a3.json", "a6.json"), ("cpu serial -> cuda plexus-3d", "b3.json", "b6.json"),
                            ("cuda 1d, 4 ranks (--gpu-comm mpi) -> cpu 1d, 2 ranks", "c3.json", "c6.json"),
                            ("cuda 2d 2x2, 4 ranks (--gpu-comm nccl) -> cpu 1d, 2 ranks", "d3.json", "d6.json")):
    got = {**loss(first), **loss(second)}
    worst = max(abs(got[e] - ref[e]) / abs(ref[e]) for e in ref)
    print(f"checkpoint | {name} | epochs {sorted(got)} | max rel |loss - uninterrupted cpu serial| {worst:.2e} | {'ok' if worst < 1e-4 else 'FAIL'}")
EOF
} > "$out/checkpoint.txt" 2>&1
grep -E "checkpoint \||error" "$out/checkpoint.txt"
fi

if ! skipped multirank; then
step "4 ranks on the node's GPUs over --gpu-comm mpi and nccl"
# Every multi-rank strategy's epoch at 4 ranks with each transport (ranks share the GPUs where the
# node has fewer than 4; NCCL then in its test mode, every rank its own NCCL_HOSTID), beside the CPU
# backend's run: the last loss, the median epoch, the wire bytes of the last epoch, which transport ran.
{
  gcnlab prepare --dataset "rmat:scale=16,edge-factor=16,features=128,classes=32,seed=1" --out "$work/rmat16.gcl" | tail -1
  for algo in 1d 1d-ring 1.5d sa-1d sa-1.5d 2d split-3d mggcn-1d plexus-3d; do
    for b in "$backend --gpu-comm mpi" "$backend --gpu-comm nccl" cpu; do
      launch=()
      case $b in *nccl*) launch=(bash "$root/scripts/nccl_host_per_rank.sh") ;; esac
      if [ "$backend" = cpu ]; then  # the dry run: --gpu-comm needs cuda; the NCCL runs still take the launcher
        case $b in *mpi*) continue ;; esac
        b=cpu
      fi
      # shellcheck disable=SC2086
      mpiexec -n 4 "${launch[@]}" gcnlab train --algo "$algo" --backend $b --dataset "gcl:$work/rmat16.gcl" --layers 3 --hidden 128 \
        --dropout 0 --epochs 4 --no-eval --threads $((threads / 4 > 0 ? threads / 4 : 1)) --out "$work/mr.json" \
        >"$work/mr.log" 2>&1 || { echo "multirank | $algo | $b | FAILED: $(grep -m1 error "$work/mr.log")"; continue; }
      python3 - "$work/mr.json" "$algo" "$b${launch[*]:+ (NCCL_HOSTID per rank)}" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"multirank | {sys.argv[2]} | {sys.argv[3]} | loss {r['summary']['final_loss']:.6f} | "
      f"epoch {r['summary']['epoch_time_median_s'] * 1e3:.1f} ms | wire {sum(r['epochs'][-1]['wire_bytes'].values()):.0f} B | "
      f"transport {r['provenance'].get('gpu_comm', '-')}")
EOF
    done
  done
  # The collectives themselves over each transport (issue 63), 4 ranks: NCCL (in its test mode where
  # the ranks share a GPU: each its own NCCL_HOSTID), MPI staged (or CUDA-aware), and the host's MPI
  # and the staged path on host memory beside.
  for t in "cpu" "cpu --gpu-comm mpi" "$backend --gpu-comm mpi" "$backend --gpu-comm nccl"; do
    case $t in *cuda*) [ "$backend" = cpu ] && continue ;; esac
    launch=()
    case $t in *nccl*) launch=(bash "$root/scripts/nccl_host_per_rank.sh") ;; esac
    # shellcheck disable=SC2086
    mpiexec -n 4 "${launch[@]}" gcnlab bench collective --backend $t --sizes 64K,4M,64M --reps 10 2>&1 |
      grep "^bench=collective" ||
      echo "collective | $t | FAILED"
  done
} > "$out/multirank.txt" 2>&1
grep -E "multirank \||collective|error" "$out/multirank.txt"
fi

for scale in $scales; do
  if [ "$scale" != "${scales%% *}" ] && [ "$(left)" -lt 200 ]; then
    echo "== scale $scale skipped: $(left) s of the budget left"; continue
  fi
  step "R-MAT scale $scale"
  gcl=$work/rmat$scale.gcl
  gcnlab prepare --dataset "rmat:scale=$scale,edge-factor=16,features=128,classes=32,seed=1" --out "$gcl" 2>&1 | tail -1
  log=$out/epoch-rmat$scale.txt
  : > "$log"
  if [ "$scale" = "${scales%% *}" ]; then
    mpiexec -n 1 gcnlab bench stream --backend "$backend" --mib 1024 --threads "$threads" 2>&1 | tee "$out/stream.txt" |
      grep -E "bench=stream|error"
    mpiexec -n 1 gcnlab bench spmm --backend "$backend" --dataset "gcl:$gcl" --f 16,64,128 --reps 20 2>&1 | tee "$out/spmm-rmat$scale.txt" | grep "bench=spmm"
  fi
  epoch() {  # gcnlab's epoch of model $1, its breakdown with it
    echo "== gcnlab model=$1" >> "$log"
    # shellcheck disable=SC2046
    mpiexec -n 1 gcnlab bench epoch --algo serial --backend "$backend" --dataset "gcl:$gcl" --layers 3 $(model_args "$1") \
      --dropout 0 --epochs 11 --no-eval --threads "$threads" 2>&1 | sed -E "s/^bench=(epoch|epoch-category) /bench=\\1 model=$1 /" |
      tee -a "$log" | grep -E "bench=epoch model=$1 backend|error"
  }
  pymodels=$(for m in $models; do py_model "$m"; done | paste -sd,)
  for m in $models; do epoch "$m"; done
  timeout $(( $(left) > 60 ? $(left) - 30 : 30 )) python3 -W ignore "$root/experiments/bench_pytorch.py" "$gcl" \
    --device "$backend" --threads "$threads" --layers 3 --hidden 128 --epochs 5 --rounds "$rounds" --spmm "" \
    --framework pytorch,pyg-sparse,pyg-edge-index --model "$pymodels" 2>&1 | tee -a "$log" | grep -E "bench=|Error"
  for m in $models; do epoch "$m"; done
done
step done
rm -rf "$work"

#!/usr/bin/env bash
# ScaleGNN's question (Wei et al. 2026, Sec. VII-B) on this machine: time and
# epochs to a target validation accuracy for mini-batch scalegnn-4d (two batch
# sizes, D = 1 and D = 2 data-parallel groups) against full-graph plexus-3d at
# the same rank count, on Cora (Kipf's recipe) and on an SBM graph.
#   plexus-3d    --grid 1x2x2              full graph, one step per epoch
#   scalegnn-4d  --grid 1x1x2x2 -B b       one group: the same 3D PMM on samples
#   scalegnn-4d  --grid 2x1x2x1 -B b       two groups of 2 ranks, dW all-reduced
# and, for ScaleGNN's BF16 communication (Sec. V-B: "indistinguishable" test
# accuracy), plexus-3d and scalegnn-4d (D = 1, the smaller B) again with
# --comm-precision bf16.
# Every configuration runs both models (--model): the plain GCN the other
# strategies train, and ScaleGNN's (input projection, RMSNorm, residuals,
# output head; Sec. III), whose bf16 twins are left out (the precision's
# effect is the PMM's, measured on the GCN).
# Each run evaluates the full graph after every epoch (and every --eval-every
# steps for mini-batches); "time to target" is training time (evaluation
# excluded, slowest rank) until the first evaluation at or above the target.
# Medians over --seeds. OUT/summary.md has the table.
#
#   experiments/scalegnn_tta.sh [--seeds "1 2 3"] [--models "gcn scalegnn"] [--out DIR] [--quick]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
gcnlab=${GCNLAB:-$root/build/gcnlab}
data_dir=${GCNLAB_DATA_DIR:-}  # the directory that holds planetoid/ (Cora); without it, SBM only
seeds="1 2 3"
models="gcn scalegnn"
out=$root/results/scalegnn
quick=0
while [ $# -gt 0 ]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quick) quick=1; seeds=1; shift ;;
    *) echo "usage: experiments/scalegnn_tta.sh [--seeds \"1 2 3\"] [--models \"gcn scalegnn\"] [--out DIR] [--quick]" >&2
       exit 2 ;;
  esac
done
[ -x "$gcnlab" ] || { echo "scalegnn_tta: $gcnlab not built (bash scripts/build.sh)" >&2; exit 1; }
mkdir -p "$out/runs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

# name | dataset spec | model options | target | epochs | batch sizes
workloads=()
if [ -n "$data_dir" ] && [ -f "$data_dir/planetoid/ind.cora.graph" ]; then
  workloads+=("cora|planetoid:$data_dir/planetoid/cora|--layers 2 --hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --weight-decay-layers first|0.75|100|512 1024")
else
  echo "scalegnn_tta: no Cora under $data_dir/planetoid (set GCNLAB_DATA_DIR): SBM only" >&2
fi
workloads+=("sbm|sbm:nodes=20000,classes=8,avg-degree=16,features=64,seed=1|--layers 3 --hidden 64 --dropout 0.5 --lr 0.01|0.80|100|2048 4096")
if [ "$quick" = 1 ]; then  # the CLI test: a small SBM, a few epochs
  workloads=("sbm|sbm:nodes=2000,classes=4,avg-degree=12,features=16,seed=1|--layers 2 --hidden 16 --lr 0.02|0.35|6|256 512")
fi

for w in "${workloads[@]}"; do
  IFS='|' read -r name spec model target epochs batches <<<"$w"
  for variant in $models; do
    configs=("plexus-3d|--algo plexus-3d --grid 1x2x2 --permutation none")
    [ "$variant" = gcn ] && configs+=("plexus-3d-bf16|--algo plexus-3d --grid 1x2x2 --permutation none --comm-precision bf16")
    for b in $batches; do
      configs+=("scalegnn-D1-B$b|--algo scalegnn-4d --grid 1x1x2x2 --batch-size $b --eval-every 1")
      configs+=("scalegnn-D2-B$b|--algo scalegnn-4d --grid 2x1x2x1 --batch-size $b --eval-every 1")
    done
    b=${batches%% *}
    [ "$variant" = gcn ] &&
      configs+=("scalegnn-D1-B$b-bf16|--algo scalegnn-4d --grid 1x1x2x2 --batch-size $b --eval-every 1 --comm-precision bf16")
    for seed in $seeds; do
      for c in "${configs[@]}"; do
        run=${c%%|*}
        tag="$name-$variant-$run-s$seed"
        # shellcheck disable=SC2086
        ${MPIRUN:-mpirun} -np 4 "$gcnlab" train ${c#*|} --model "$variant" --dataset "$spec" $model --epochs "$epochs" \
          --seed "$seed" --target-acc "$target" --threads 1 --out "$out/runs/$tag.json" > "$out/runs/$tag.log" 2>&1 \
          || { cat "$out/runs/$tag.log" >&2; exit 1; }
        echo "$tag: $(grep -o 'test accuracy [0-9.]*%' "$out/runs/$tag.log")"
      done
    done
  done
done

/usr/bin/python3 - "$out" <<'PY'
import glob, json, statistics, sys
out = sys.argv[1]
runs = {}
for f in sorted(glob.glob(f"{out}/runs/*.json")):
    j = json.load(open(f))
    name, config = f.split("/")[-1].rsplit("-s", 1)[0].split("-", 1)
    runs.setdefault((name, config), []).append(j)
def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None
def fmt(v, f):
    return "not reached" if v is None else f.format(v)
lines = ["4 ranks (oversubscribed on this machine's cores), one thread each; medians over seeds. Time to "
         "target = training time until the first full-graph evaluation at or above the target (evaluation "
         "excluded, slowest rank); a mini-batch epoch is ceil(N / (B D)) steps.", "",
         "| dataset | model | strategy | grid | B | comm | target val acc | epochs to target | s to target | reached | "
         "epoch ms | best val | test at best val |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
for (name, config), js in runs.items():
    c = js[0]["config"]
    mb = c.get("minibatch") or {}
    targets = [j["summary"]["target"] for j in js]
    lines.append("| {} | {} | `{}` | {} | {} | {} | {:.2f} | {} | {} | {}/{} | {:.1f} | {:.3f} | {:.3f} |".format(
        name, c["model"].get("variant", "gcn"), c["algo"], "x".join(map(str, c["grid"])), mb.get("batch_size", "N"), c.get("comm_precision", "fp32"),
        c["target_acc"],
        fmt(med([t and t["epochs"] for t in targets]), "{:.2f}"),
        fmt(med([t and t["train_seconds"] for t in targets]), "{:.2f}"),
        sum(t is not None for t in targets), len(targets),
        med([j["summary"]["epoch_time_s"] * 1e3 for j in js]),
        med([j["summary"]["best_val_acc"] for j in js]),
        med([j["summary"]["test_acc_at_best_val"] for j in js])))
open(f"{out}/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY

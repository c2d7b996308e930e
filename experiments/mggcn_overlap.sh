#!/usr/bin/env bash
# MG-GCN's claims on this machine, side by side in one run (Balın et al.
# ICPP'22 Sec. 4.2, 4.3, 5.2): interleaved repetitions of
#   1d                         CAGNET 1D, block rows in the graph's order
#   1d --partitioner random    the same with MG-GCN's random permutation
#   mggcn-1d --overlap off     + the shared buffer plan (L + 3)
#   mggcn-1d                   + the broadcast of the next tile during the SpMM
# at each rank count, one thread per rank. OUT/summary.md has the medians:
# epoch time, SpMM time, exposed and hidden broadcast time (slowest rank),
# nnz imbalance, peak backend memory per rank.
#
#   experiments/mggcn_overlap.sh [--dataset SPEC] [--ranks "4 2"] [--reps 3] [--out DIR]
#
# Default graph: R-MAT scale 16 with edge factor 32 (2.1 M nonzeros), 64
# features, 3 layers of 64: under 1d on 4 ranks the SpMM and the broadcasts
# are each more than 20 % of the epoch.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
gcnlab=${GCNLAB:-$root/build/gcnlab}
dataset="rmat:scale=16,edge-factor=32,features=64,classes=16,seed=1"
ranks="4 2"
reps=3
out=$root/results/mggcn
while [ $# -gt 0 ]; do
  case $1 in
    --dataset) dataset=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: experiments/mggcn_overlap.sh [--dataset SPEC] [--ranks \"4 2\"] [--reps R] [--out DIR]" >&2
       exit 2 ;;
  esac
done
[ -x "$gcnlab" ] || { echo "mggcn_overlap: $gcnlab not built (bash scripts/build.sh)" >&2; exit 1; }
mkdir -p "$out/runs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

gcl=$out/dataset.gcl
[ -f "$gcl" ] || "$gcnlab" prepare --dataset "$dataset" --out "$gcl" 2>&1 | tail -1
configs=("1d:--algo 1d" "1d-random:--algo 1d --partitioner random" "mggcn-off:--algo mggcn-1d --overlap off"
         "mggcn-on:--algo mggcn-1d --overlap on")
for p in $ranks; do
  for r in $(seq 1 "$reps"); do
    for c in "${configs[@]}"; do
      name=${c%%:*}
      # shellcheck disable=SC2086
      mpirun -np "$p" "$gcnlab" train ${c#*:} --dataset "gcl:$gcl" --layers 3 --hidden 64 --epochs 6 --no-eval \
        --threads 1 --out "$out/runs/$name-np$p-r$r.json" > "$out/runs/$name-np$p-r$r.log" 2>&1
      echo "$name P=$p rep $r: $(grep -o 'epoch time [0-9.]* ms' "$out/runs/$name-np$p-r$r.log")"
    done
  done
done

/usr/bin/python3 - "$out" "$dataset" <<'EOF'
import glob, json, statistics, sys
out, dataset = sys.argv[1], sys.argv[2]
rows = {}
for f in sorted(glob.glob(f"{out}/runs/*.json")):
    j = json.load(open(f))
    name = f.split("/")[-1].rsplit("-np", 1)[0]
    slow = max(j["per_rank"], key=lambda r: sum(r["time_s"].values()))
    rows.setdefault((j["config"]["ranks"], name), []).append({
        "epoch": j["summary"]["epoch_time_s"] * 1e3,
        "spmm": slow["time_s"]["spmm"] * 1e3,
        "exposed": slow["time_s"]["bcast_dense"] * 1e3,
        "hidden": slow.get("hidden_time_s", {}).get("bcast_dense", 0.0) * 1e3,
        "imbalance": j["load_balance"]["nnz_max_over_mean"],
        "peak": j["memory"]["peak_bytes_max"] / 2**20,
    })
labels = {"1d": "`1d` (block)", "1d-random": "`1d --partitioner random`",
          "mggcn-off": "`mggcn-1d --overlap off`", "mggcn-on": "`mggcn-1d`"}
lines = [f"dataset `{dataset}`, 3 layers of 64, one thread per rank; medians of "
         f"{len(next(iter(rows.values())))} interleaved runs; slowest rank's times per epoch", "",
         "| P | strategy | epoch ms | SpMM ms | bcast exposed ms | bcast hidden ms | nnz max/mean | peak MiB/rank |",
         "|---|---|---|---|---|---|---|---|"]
for (p, name) in sorted(rows, key=lambda k: (-k[0], list(labels).index(k[1]))):
    m = {k: statistics.median(r[k] for r in rows[(p, name)]) for k in rows[(p, name)][0]}
    lines.append(f"| {p} | {labels[name]} | {m['epoch']:.1f} | {m['spmm']:.1f} | {m['exposed']:.1f} | "
                 f"{m['hidden']:.1f} | {m['imbalance']:.2f} | {m['peak']:.1f} |")
open(f"{out}/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

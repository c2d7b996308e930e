#!/usr/bin/env bash
# GraphSAGE on Cora with PyG's benchmark recipe (2 layers, hidden 16, lr 0.01,
# weight decay 5e-4, dropout 0.5, 200 epochs, row-normalised features): the
# mean final test accuracy over 10 seeds must be >= 79.0% under `serial`,
# `1d`, `2d` and `plexus-3d` (2 ranks each; PyG's benchmark reports
# 79.99 ± 0.49). Run alone: ctest -L accuracy.
source "$(dirname "$0")/lib.sh"
if [ -z "${GCNLAB_DATA_DIR:-}" ]; then
  echo "SKIP: GCNLAB_DATA_DIR is not set (needs planetoid/ind.cora.*)"
  exit 77
fi
RECIPE=(--model sage --dataset "planetoid:$GCNLAB_DATA_DIR/planetoid/cora" --layers 2 --hidden 16 --dropout 0.5
        --lr 0.01 --weight-decay 5e-4 --epochs 200)
for run in "serial 1" "1d 2" "2d 2" "plexus-3d 2 --permutation none"; do
  set -- $run
  algo=$1 np=$2
  shift 2
  for seed in 1 2 3 4 5 6 7 8 9 10; do
    "$MPIEXEC" -np "$np" "$GCNLAB" train --algo "$algo" "$@" "${RECIPE[@]}" --seed $seed --out "$WORK/$algo-$seed.json" \
      2>/dev/null || fail "$algo seed $seed"
  done
  "$PYTHON" - "$WORK" "$algo" <<'PY' || fail "$algo accuracy"
import json, statistics, sys
work, algo = sys.argv[1:]
acc = [json.load(open(f"{work}/{algo}-{s}.json"))["summary"]["test_acc"] * 100 for s in range(1, 11)]
mean = statistics.mean(acc)
print(f"--model sage --algo {algo}: test accuracy {', '.join(f'{a:.1f}' for a in acc)} -> mean {mean:.2f} ± {statistics.stdev(acc):.2f}%")
sys.exit(0 if mean >= 79.0 else 1)
PY
done
finish

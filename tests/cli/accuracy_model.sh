#!/usr/bin/env bash
# A model on Cora with PyG's benchmark recipe (2 layers, hidden 16, lr 0.01,
# weight decay 5e-4, dropout 0.5, 200 epochs, row-normalised features): the
# mean final test accuracy over 10 seeds must be >= MIN under each strategy
# given (serial on 1 rank, the others on 2). Run alone: ctest -L accuracy.
#   accuracy_model.sh MODEL MIN STRATEGY...   (a STRATEGY with its flags: "plexus-3d --permutation none")
# accuracy_sage: GraphSAGE, MIN 79.0 (PyG's benchmark reports 79.99 ± 0.49).
# accuracy_gin: GIN (GINConv with a two-layer MLP, ε = 0), MIN 73.0: PyG
# 2.3.1's GINConv trained with this recipe (dropout at each GIN layer's input)
# scored 74.53 ± 1.73 over seeds 1-10 on this machine, gcnlab 74.49 ± 1.73.
# accuracy_gat: GAT with the GAT paper's recipe (8 heads x 8 hidden, one output
# head, dropout 0.6 on features and attention, lr 0.005, weight decay 5e-4,
# ELU; 200 epochs), scored at the best validation epoch: MIN 81.5 (the paper
# reports 83.0 ± 0.7 with early stopping; issue 46), under serial and the
# distributed strategies that lay out attention (measured 82.10 ± 1.23 under
# serial, 1d, 1d-ring, sa-1d, mggcn-1d, 2d --grid 1x2, split-3d --grid
# 1x2x1, plexus-3d --grid 1x2x1 and 2x1x1: the same on every seed; CI runs serial and 2d --grid
# 1x2, the feature split: the strategies' equality with serial is strategies_models_*'s). With 8
# averaged output heads (the paper's Pubmed output layer,
# STRATEGY "serial --output-heads 8"): 81.56 ± 1.05 under serial and 2d --grid 1x2,
# the same on every seed (by hand, 2026-11-27).
source "$(dirname "$0")/lib.sh"
if [ -z "${GCNLAB_DATA_DIR:-}" ]; then
  echo "SKIP: GCNLAB_DATA_DIR is not set (needs planetoid/ind.cora.*)"
  exit 77
fi
model=$1 min=$2
shift 2
RECIPE=(--model "$model" --dataset "planetoid:$GCNLAB_DATA_DIR/planetoid/cora" --layers 2 --hidden 16 --dropout 0.5
        --lr 0.01 --weight-decay 5e-4 --epochs 200)
SCORE=test_acc
if [ "$model" = gat ]; then  # the GAT paper's Cora recipe (Sec. 3.3), scored at the best validation epoch
  RECIPE=(--model gat --dataset "planetoid:$GCNLAB_DATA_DIR/planetoid/cora" --layers 2 --hidden 8 --heads 8
          --dropout 0.6 --attention-dropout 0.6 --lr 0.005 --weight-decay 5e-4 --epochs 200)
  SCORE=test_acc_at_best_val
fi
for run in "$@"; do
  set -- $run
  algo=$1
  shift
  np=2
  [ "$algo" = serial ] && np=1
  for seed in 1 2 3 4 5 6 7 8 9 10; do
    "$MPIEXEC" -np "$np" "$GCNLAB" train --algo "$algo" "$@" "${RECIPE[@]}" --seed $seed --out "$WORK/$algo-$seed.json" \
      2>/dev/null || fail "$algo seed $seed"
  done
  "$PYTHON" - "$WORK" "$model" "$algo" "$min" "$SCORE" <<'PY' || fail "$algo accuracy"
import json, statistics, sys
work, model, algo, least, score = sys.argv[1:]
acc = [json.load(open(f"{work}/{algo}-{s}.json"))["summary"][score] * 100 for s in range(1, 11)]
mean = statistics.mean(acc)
print(f"--model {model} --algo {algo}: {score} {', '.join(f'{a:.1f}' for a in acc)} -> mean {mean:.2f} ± {statistics.stdev(acc):.2f}% (at least {least})")
sys.exit(0 if mean >= float(least) else 1)
PY
done
finish

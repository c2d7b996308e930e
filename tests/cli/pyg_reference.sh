#!/usr/bin/env bash
# gcnlab's models against PyTorch Geometric 2.3.1's layers on Cora, with the
# same initial weights, graph, features and labels (issue 45): `serial
# --model sage` against a two-layer SAGEConv network (aggr="mean",
# root_weight, bias; ReLU between), `serial --model gin --train-eps` against
# two GINConv layers (MLP Linear-ReLU-Linear, train_eps=True, ε = 0.1 at
# first; ReLU between), `serial --model gat` against GAT's Cora model in
# GATConv layers (8 heads of 8, concatenated; ELU; one output head, issue
# 46), and `--concat off --output-heads 3` against GATConv(concat=False)
# layers (4 heads of 8 averaged; 3 output heads averaged). Dropout
# (attention dropout too) and weight decay off. Checked:
# the loss and the train/val/test accuracies of the first forward pass, and
# every parameter's gradient, within 1e-5 relative (|a - b| <= 1e-5 (|b| +
# max |b| of the parameter)). gcnlab's gradients are read from one SGD step
# with a large learning rate: g = (W_initial - W_final) / lr.
# The reference: experiments/setup_pyg.sh (.ci/run calls it) makes
# .venv-pyg/; without it this test is skipped and says why.
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PYG=${PYG_PYTHON:-$root/.venv-pyg/bin/python}
if [ -z "${GCNLAB_DATA_DIR:-}" ]; then
  echo "SKIP: GCNLAB_DATA_DIR is not set (needs planetoid/ind.cora.*)"
  exit 77
fi
if ! "$PYG" -c "import torch_geometric" 2>/dev/null; then
  echo "SKIP: no PyTorch Geometric at $PYG (run experiments/setup_pyg.sh, or set PYG_PYTHON)"
  exit 77
fi
# Cora as gcnlab reads it, in a prepared directory the reference reads too
"$GCNLAB" prepare --dataset "planetoid:$GCNLAB_DATA_DIR/planetoid/cora" --shards 1x1 --out "$WORK/cora" >/dev/null \
  || fail "prepare"
# The learning rate of the SGD step that reads the gradients: large enough
# that float32's rounding of W - lr g resolves the smallest ones (an averaged
# output layer's attention gradients are ~1e-8).
declare -A LR=([sage]=1e4 [gin]=1e4 [gat]=1e4 [gat-mean]=1e7)
declare -A FLAGS=([sage]="--hidden 16" [gin]="--hidden 16 --train-eps --gin-eps 0.1" [gat]="--hidden 8 --heads 8"
                  [gat-mean]="--hidden 8 --heads 4 --concat off --output-heads 3")
for model in sage gin gat gat-mean; do
  # shellcheck disable=SC2086
  "$GCNLAB" train --algo serial --model "${model%-mean}" ${FLAGS[$model]} --dataset "gcl:$WORK/cora" --layers 2 --dropout 0 \
    --optimizer sgd --lr "${LR[$model]}" --weight-decay 0 --epochs 1 --no-eval --seed 3 --weights-out "$WORK/$model" \
    --out "$WORK/$model.json" >/dev/null 2>&1 || fail "$model: gcnlab train"
  "$PYG" "$root/tests/cli/pyg_reference.py" "$WORK/cora" "$WORK/$model" "$WORK/$model.json" "$model" "${LR[$model]}" \
    || fail "$model differs from PyTorch Geometric"
done
finish

#!/usr/bin/env bash
# CUDA builds: on a machine without a usable device, `train --backend cuda`
# exits non-zero with one clear message carrying the CUDA error string, on 1
# and 2 ranks, without hanging. Skipped (77) where a device exists.
source "$(dirname "$0")/lib.sh"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: a CUDA device is present"
  exit 77
fi
for np in 1 2; do
  expect_error $np "--backend cuda: no usable CUDA device (" train --algo 1d --backend cuda --epochs 1
done
finish

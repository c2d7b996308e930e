#!/usr/bin/env bash
# The references experiments/bench.sh sets gcnlab beside (optional): plain
# PyTorch from Debian (python3-torch 1.13) and PyTorch Geometric 2.3.1 from
# PyPI (the release that fits torch 1.13) and DGL 1.1.3 beside it, in a venv
# over it, .venv-pyg/ at the repository root, which bench.sh, bench_models.sh
# and bench_gat.py use when it exists. Idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
missing=()
for p in python3-torch python3-venv; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
venv=$root/.venv-pyg
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -c "import torch_geometric" 2>/dev/null || "$venv/bin/pip" install -q torch_geometric==2.3.1
# DGL 1.1.3, the last release whose PyPI wheel runs over torch 1.13 (DGL 2.x needs torch 2): Debian's tag
# "1.13.0a0" fails DGL's import-time version check, which bench_pytorch.import_dgl shows the release's
# number. Chosen over a second venv with PyPI's torch 2 because then DGL and PyG run the same torch, whose
# GEMMs are Debian's OpenBLAS with the kernels gcnlab's OpenBLAS GEMM runs (GCNLAB_CPU_GEMM=openblas, beside
# its default oneDNN one in experiments/bench_models.sh; experiments/bench.sh sets OPENBLAS_CORETYPE for both).
"$venv/bin/python" -c "import importlib.metadata as m; m.version('dgl')" 2>/dev/null || "$venv/bin/pip" install -q dgl==1.1.3
"$venv/bin/python" -W ignore - "$root/experiments" "$venv" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import torch, torch_geometric, bench_pytorch
print(f"setup_pyg: torch {torch.__version__}, PyG {torch_geometric.__version__}, DGL {bench_pytorch.import_dgl().__version__} in {sys.argv[2]}")
PY

#!/usr/bin/env bash
# The references experiments/bench.sh sets gcnlab beside (optional): plain
# PyTorch from Debian (python3-torch 1.13) and PyTorch Geometric 2.3.1 from
# PyPI (the release that fits torch 1.13) in a venv over it, .venv-pyg/ at the
# repository root, which bench.sh uses when it exists. Idempotent.
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
"$venv/bin/python" -c "import torch, torch_geometric; print(f'setup_pyg: torch {torch.__version__}, PyG {torch_geometric.__version__} in {\"$venv\"}')"

#!/usr/bin/env bash
# Installs gcnlab's Debian dependencies when they are missing (idempotent).
# Safe to run repeatedly: it only calls apt-get when a package is absent.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libopenmpi-dev openmpi-bin
  libmetis-dev libptscotch-dev libfmt-dev catch2 nlohmann-json3-dev libcli11-dev libeigen3-dev libzip-dev libxxhash-dev libhwloc-dev
  libopenblas-dev libopenblas0-openmp zlib1g-dev
  libdnnl-dev  # oneDNN: the CPU backend's default sgemm (backends/cpu/sgemm.hpp)
  python3-numpy python3-matplotlib python3-pandas python3-jsonschema
  clang libclang-rt-dev  # the fuzz build (scripts/fuzz.sh): libFuzzer, ASan, UBSan
  chromium tidy fonts-dejavu-core  # the report check (tests/cli/report.sh): headless Chromium, HTML Tidy
  patchelf  # scripts/bundle.sh: the relocatable CUDA bundle's RPATHs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all Debian packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Configures and builds gcnlab in BUILD_DIR (default: build), BUILD_TYPE
# (default Release). Extra arguments, and CMAKE_ARGS, go to cmake; e.g.
#   BUILD_DIR=build-cuda CMAKE_ARGS=-DGCNLAB_CUDA=ON bash scripts/build.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} ${CMAKE_ARGS:-} "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"

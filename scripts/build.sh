#!/usr/bin/env bash
# Configures and builds gcnlab in BUILD_DIR (default: build), BUILD_TYPE
# (default Release). Extra arguments, and CMAKE_ARGS, go to cmake; BUILD_TARGETS
# (default: everything, the tests included) names what to build; e.g.
#   BUILD_DIR=build-cuda CMAKE_ARGS=-DGCNLAB_CUDA=ON bash scripts/build.sh
#   BUILD_TARGETS=gcnlab bash scripts/build.sh      # the binary only
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} ${CMAKE_ARGS:-} "$@" >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}

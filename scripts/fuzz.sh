#!/usr/bin/env bash
# Fuzzes every file parser (fuzz/targets.cpp) with libFuzzer + ASan + UBSan:
#   scripts/fuzz.sh [RUNS]     (default 200000 inputs per parser; CI runs 4000)
# Builds fuzz/ with clang into ${FUZZ_BUILD_DIR:-build-fuzz}, replays every
# input in fuzz/regressions/<target>/ (each a crash found earlier, fixed), then
# fuzzes from fuzz/corpus/<target>/ (copied: the committed seeds stay as they
# are). A finding is written to build-fuzz/findings/<target>-crash-* and ends
# the script non-zero: fix it and add the input to fuzz/regressions/<target>/.
# FUZZ_SEED fixes libFuzzer's seed (CI sets it); unset, each run explores new
# inputs. A fixed seed does not make a run repeat: what the comparisons feed
# back (pointers, the scratch directory's pid in every path and message)
# differs from process to process (measured: two runs of one seed, with ASLR
# off too, kept different corpora). So a finding prints its input in base64.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-200000}
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
"$root/scripts/setup.sh"
CC=clang CXX=clang++ cmake -S "$root/fuzz" -B "$build" -DCMAKE_BUILD_TYPE=None >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
mkdir -p "$build/findings"
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1
status=0
for target in mtx edges pickle gcl shards shard-files ogb-csv partition npy npz checkpoint spec; do
  bin="$build/fuzz_$target"
  if compgen -G "$root/fuzz/regressions/$target/*" >/dev/null; then
    # replayed as a corpus (-runs=0): libFuzzer checks for leaks only there, not on named files
    replay=$(mktemp -d)
    cp "$root/fuzz/regressions/$target/"* "$replay/"
    "$bin" -runs=0 "$replay" >"$build/findings/$target-regressions.log" 2>&1 ||
      { echo "fuzz: $target: a regression input fails again (log: $build/findings/$target-regressions.log)"; status=1; }
    rm -rf "$replay"
  fi
  corpus=$(mktemp -d)
  cp "$root/fuzz/corpus/$target/"* "$corpus/"
  start=$(date +%s)
  if "$bin" -runs="$runs" -seed="${FUZZ_SEED:-0}" -max_len=32768 -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 \
       -artifact_prefix="$build/findings/$target-" "$corpus" >"$build/findings/$target.log" 2>&1; then
    echo "fuzz: $target: $runs inputs, no finding ($(( $(date +%s) - start )) s, corpus $(ls "$corpus" | wc -l) files)"
  else
    echo "fuzz: $target: FINDING (log: $build/findings/$target.log)"
    # the report's first lines (an uncaught exception's type and what(), an internal error's message too)
    grep -E "ERROR|runtime error|==[0-9]+==|uncaught|SUMMARY|terminate called|what\(\)|internal error|#[0-9]+ 0x" \
      "$build/findings/$target.log" | head -20
    # the input, so that a run elsewhere (CI's) can be replayed here: base64 -d > fuzz/regressions/<target>/NAME
    for crash in "$build/findings/$target-"{crash,oom,timeout,leak}-*; do
      [ -f "$crash" ] && echo "fuzz: $target: input $(basename "$crash") (base64): $(base64 -w0 "$crash" | head -c 8192)"
    done
    status=1
  fi
  rm -rf "$corpus"
done
exit $status

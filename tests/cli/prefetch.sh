#!/usr/bin/env bash
# The CPU kernels whose memory traffic is gathers prefetch the rows they will
# gather, and the prefetches are in the built binary: every instance of the
# SpMM's register segments (cpu::segment<V>) and of the attention SpMM's
# (cpu::edge_segment<...>) holds at least one prefetch instruction. A compiler
# may delete them without a word: GCC 12 deleted every one in segment<V>,
# whose prefetches sat in a void lambda, from the kernel's first version until
# 2026-12-08 (docs/performance.md); no result changes, only the speed.
source "$(dirname "$0")/lib.sh"
command -v objdump >/dev/null || { echo "skipped: no objdump (binutils)"; exit 77; }

objdump -d -C --no-show-raw-insn "$GCNLAB" >"$WORK/gcnlab.s" || fail "objdump -d $GCNLAB"
# per function of the two kernel families: its name and its prefetch count
awk '/^[0-9a-f]+ </ { fn = $0; if (fn ~ /gcnlab::cpu::\(anonymous namespace\)::(edge_)?segment</) n[fn] = 0 }
     fn in n && /prefetch/ { n[fn]++ }
     END { for (f in n) print n[f] "\t" f }' "$WORK/gcnlab.s" >"$WORK/counts"
kernels=$(wc -l <"$WORK/counts")
plain=$(grep -c "::segment<" "$WORK/counts")
attention=$(grep -c "::edge_segment<" "$WORK/counts")
[ "$plain" -ge 1 ] && [ "$attention" -ge 1 ] || fail "the kernels are not in the binary ($plain segment<V>, $attention edge_segment<...>): the check would pass on nothing"
while IFS=$'\t' read -r count name; do
  [ "$count" -ge 1 ] || fail "no prefetch in cpu::$(grep -oE '(edge_)?segment<[^>]*>' <<<"$name" | head -1)"
done <"$WORK/counts"
[ "$failures" -eq 0 ] && echo "ok   $kernels kernels ($plain segment<V>, $attention edge_segment<...>), each with its prefetches"
finish

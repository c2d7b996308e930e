#!/usr/bin/env bash
# The layers are enforced by the build (cmake/GcnlabLayers.cmake): a file sees
# the include folders of its own layer and of the layers below it, no others.
# This test states the intended architecture on its own (DIRECT below) and checks
# the build against it:
#  1. every header of a layer resolves its includes with that layer's include
#     directories alone (an upward include in a header that only a higher
#     layer's file includes would otherwise slip through the build);
#  2. for every pair of layers (L, U), a header of U resolves under L exactly
#     when U is L or below L (so the check can fail both ways);
#  3. a real target of the comm layer that includes a model header
#     (tests/layers/upward_include.cpp) fails to build, naming the header.
source "$(dirname "$0")/../cli/lib.sh"
# This test runs the compiler, no gcnlab code: the sanitizer build's test
# environment (a preloaded library linked with ASan, leak checks) is not for it.
unset LD_PRELOAD ASAN_OPTIONS LSAN_OPTIONS
build=$(dirname "$GCNLAB")
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
root=$GCNLAB_SOURCE_DIR

declare -A DIRECT=(
  [core]="" [matrix]="core" [comm]="core" [data]="matrix" [model]="data comm"
  [results]="model" [dist]="model" [backends]="matrix comm" [partitioners]="model"
  [algorithms]="dist partitioners" [models]="model" [planning]="algorithms models backends results" [app]="planning"
)
below() {  # the layers below $1, transitively
  local l seen=" "
  local todo=(${DIRECT[$1]})
  while [ ${#todo[@]} -gt 0 ]; do
    l=${todo[0]}; todo=("${todo[@]:1}")
    case "$seen" in *" $l "*) continue ;; esac
    seen="$seen$l "; todo+=(${DIRECT[$l]})
  done
  echo "$seen"
}

layers=()
for f in "$build"/layers/*.includes; do layers+=("$(basename "$f" .includes)"); done
for l in "${layers[@]}"; do
  [ -n "${DIRECT[$l]+x}" ] || fail "layer '$l' is built but not in this test's table"
done
for l in "${!DIRECT[@]}"; do
  [ -f "$build/layers/$l.includes" ] || fail "layer '$l' of this test's table is not built"
done

flags() {  # -I flags of layer $1 (not /usr/include: it would reorder the system headers)
  grep -v '^/usr/include$' "$build/layers/$1.includes" | sed '/^$/d; s/^/-I/'
}
headers() {  # the headers of layer $1 (CUDA headers need the CUDA toolkit: left to the CUDA build)
  local folder
  for folder in $(tr ';' ' ' <"$build/layers/$1.folders"); do
    find "$root/$folder" -name '*.hpp' -not -path '*/cuda/*' | sed "s|^$root/||"
  done | sort
}
resolves() {  # resolves LAYER HEADER: the preprocessor finds every include of HEADER with LAYER's flags
  # shellcheck disable=SC2046
  echo "#include \"$2\"" | "$cxx" -std=c++20 -E -x c++ $(flags "$1") - -o /dev/null 2>"$WORK/err"
}

# 1. every header, at its own layer
checked=0
for l in "${layers[@]}"; do
  for h in $(headers "$l"); do
    checked=$((checked + 1))
    resolves "$l" "$h" || { fail "$h (layer $l) includes what its layer may not see:"; grep -m3 error "$WORK/err"; }
  done
done
echo "ok   $checked headers resolve within their own layer"

# 2. the matrix of layers
pairs=0
for l in "${layers[@]}"; do
  allowed="$(below "$l")$l "
  for u in "${layers[@]}"; do
    h=$(headers "$u" | head -1)
    pairs=$((pairs + 1))
    if resolves "$l" "$h"; then
      case "$allowed" in *" $u "*) ;; *) fail "layer $l can include $h of layer $u, which is not below it" ;; esac
    else
      case "$allowed" in *" $u "*) fail "layer $l cannot include $h of layer $u below it:"; grep -m2 error "$WORK/err" ;; esac
    fi
  done
done
echo "ok   $pairs layer pairs: each sees exactly the layers below it ($(for l in "${layers[@]}"; do printf '%s<%s> ' "$l" "$(below "$l" | xargs | tr ' ' ,)"; done))"

# 3. an upward include fails a real build
if cmake --build "$build" --target gcnlab_layer_probe >"$WORK/probe" 2>&1; then
  fail "gcnlab_layer_probe (comm including common/model/trainer.hpp) built"
elif grep -q 'common/model/trainer.hpp: No such file' "$WORK/probe"; then
  echo "ok   an upward include fails the build: $(grep -m1 'No such file' "$WORK/probe" | sed "s|$root/||")"
else
  fail "gcnlab_layer_probe failed for another reason:"; tail -5 "$WORK/probe"
fi
finish

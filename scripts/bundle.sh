#!/usr/bin/env bash
# A relocatable CUDA build of gcnlab for a GPU node that has a driver and the
# CUDA libraries but no package access (common on clusters, and the lent GPU
# machines of this project): builds the CUDA configuration here and copies into
# one directory
#
#   bin/     gcnlab, and Open MPI's launcher (mpiexec, mpirun, orterun, orted)
#   lib/     every shared library they load that a bare CUDA node lacks: Open MPI
#            (and its plugins, under lib/x86_64-linux-gnu/openmpi/lib/openmpi3),
#            PMIx, hwloc, libevent, OpenBLAS, METIS, Scotch, fmt, libgfortran, ...
#   share/   Open MPI's help texts
#   tests/   the `gpu` tests (test_gpu and cuda_no_device.sh) with a
#            CTestTestfile.cmake: `cd DIR/tests && ctest -L gpu`
#   scripts/ nccl_host_per_rank.sh (NCCL's one-GPU test mode: the gpu_nccl_np* tests)
#   env.sh   source it: PATH, OPAL_PREFIX (Open MPI relocated to DIR) and
#            LD_LIBRARY_PATH with the node's CUDA runtime, cuBLAS, cuSPARSE and NCCL
#
# Binaries carry an RPATH of $ORIGIN/../lib (libraries: $ORIGIN). The CUDA
# libraries (hundreds of MiB) are the node's: env.sh finds them in
# $CUDA_HOME/lib64, /usr/local/cuda, the loader's cache or a Python's NVIDIA
# wheels (nvidia-nccl-cu13, ...) and names any it cannot find. --with-nccl
# copies this machine's libnccl into lib/ for nodes that have none at all.
# Kernels are compiled for -march=x86-64-v3 (AVX2, FMA: any recent x86-64
# host), not for this machine's CPU.
#
#   scripts/bundle.sh [--out DIR] [--with-nccl] [--tar]
#   env: BUILD_DIR (default build-bundle), CUDA_ARCHITECTURES (default 80;90)
#
# On the node: source DIR/env.sh; mpiexec -n 1 gcnlab train --backend cuda ...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bundle
with_nccl=0 tar=0
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --with-nccl) with_nccl=1; shift ;;
    --tar) tar=1; shift ;;
    *) echo "usage: scripts/bundle.sh [--out DIR] [--with-nccl] [--tar]" >&2; exit 2 ;;
  esac
done
build=${BUILD_DIR:-$root/build-bundle}
[ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null ||
  { echo "bundle: no CUDA toolkit (nvcc) on this machine" >&2; exit 1; }

"$root/scripts/setup.sh"
BUILD_DIR=$build BUILD_TARGETS="gcnlab test_gpu gcnlab_wait_politely" \
  CMAKE_ARGS="-DGCNLAB_CUDA=ON -DGCNLAB_ARCH=x86-64-v3 -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES:-80;90}" \
  "$root/scripts/build.sh"

ompi_bin=$(dirname "$(readlink -f "$(command -v orterun)")")
multiarch=$(gcc -print-multiarch)
ompi_pkglib=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
ompi_data=$(ompi_info --path pkgdatadir --parsable | sed -n 's/^path:pkgdatadir://p')
ompi_prefix=$(ompi_info --path prefix --parsable | sed -n 's/^path:prefix://p')
plugins=$out/${ompi_pkglib#"$ompi_prefix"/}  # OPAL_PREFIX=$out relocates the prefix's paths

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/tests/cli" "$out/scripts" "$out/share" "$plugins"
cp "$build/gcnlab" "$out/bin/"
cp "$build/tests/test_gpu" "$build/tests/libgcnlab_wait_politely.so" "$out/tests/"
cp "$root/tests/cli/cuda_no_device.sh" "$root/tests/cli/lib.sh" "$out/tests/cli/"
cp "$root/scripts/nccl_host_per_rank.sh" "$out/scripts/"
cp "$ompi_bin/orterun" "$ompi_bin/orted" "$(readlink -f "$(command -v ompi_info)")" "$out/bin/"
ln -s orterun "$out/bin/mpiexec"
ln -s orterun "$out/bin/mpirun"
cp -r "$ompi_data" "$out/share/"
# Open MPI's plugins, but those for networks a single GPU node does not need
# (UCX, libfabric, verbs, PSM: their libraries are large and absent there).
for p in "$ompi_pkglib"/*.so; do
  case $(basename "$p") in
    *ucx* | *ofi* | *openib* | *psm* | *flux* | *treematch* | *romio*) continue ;;
  esac
  cp "$p" "$plugins/"
done

# The libraries the node lacks: what the loader resolves here, but glibc's own
# and the CUDA libraries, which the node's driver and toolkit provide.
system='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libmvec)\.so'
cuda='^(libcuda|libcudart|libcublas|libcublasLt|libcusparse|libnvJitLink|libnccl)\.so'
declare -A copied=()
copy_deps() {  # the shared libraries FILE needs, recursively (ldd resolves the closure)
  local name path
  while read -r name path; do
    [[ $name =~ $system ]] && continue
    if [[ $name =~ $cuda ]]; then
      [[ $name == libnccl.so* && $with_nccl = 1 ]] || continue
    fi
    [ -n "${copied[$name]:-}" ] && continue
    [ -f "$path" ] || { echo "bundle: $1 needs $name, not found here" >&2; exit 1; }
    cp -L "$path" "$out/lib/$name"
    copied[$name]=1
  done < <(ldd "$1" | awk '/=>/ { print $1, $3 }')
}
for f in "$out"/bin/gcnlab "$out"/bin/orterun "$out"/bin/orted "$out"/bin/ompi_info "$out"/tests/test_gpu "$plugins"/*.so; do
  copy_deps "$f"
done

# RPATHs: binaries find lib/, libraries each other, plugins the lib/ above them.
for f in "$out"/bin/gcnlab "$out"/bin/orterun "$out"/bin/orted "$out"/bin/ompi_info; do
  patchelf --set-rpath '$ORIGIN/../lib' "$f"
done
patchelf --set-rpath '$ORIGIN/../lib' "$out/tests/test_gpu"
for f in "$out"/lib/*.so*; do patchelf --set-rpath '$ORIGIN' "$f"; done
up=$(realpath --relative-to="$plugins" "$out/lib")
for f in "$plugins"/*.so; do patchelf --set-rpath "\$ORIGIN/$up" "$f"; done

# The CUDA libraries gcnlab needs, by soname, for env.sh to look for on the node.
needed=$(ldd "$build/gcnlab" "$build/tests/test_gpu" | awk '/=>/ { print $1 }' | grep -E "$cuda" | sort -u | tr '\n' ' ')
[ $with_nccl = 1 ] && needed=$(echo "$needed" | tr ' ' '\n' | grep -v '^libnccl' | tr '\n' ' ')

# The gpu tests, relocated: this build's CTestTestfile lines for the label, with
# the build and source paths replaced by the bundle's (set when ctest reads it).
{
  echo '# The gpu tests of gcnlab (scripts/bundle.sh): source ../env.sh, then ctest -L gpu'
  echo 'if(NOT DEFINED ENV{GCNLAB_BUNDLE})'
  echo '  message(FATAL_ERROR "source the bundle'"'"'s env.sh first")'
  echo 'endif()'
  echo 'set(B "$ENV{GCNLAB_BUNDLE}")  # ctest reads this file without its own path: env.sh names the bundle'
  grep -E '^(add_test|set_tests_properties)\(\[=\[(gpu_np[0-9]+|gpu_nccl_np[0-9]+|cuda_no_device)\]=\]' "$build/tests/CTestTestfile.cmake" |
    sed -e "s#$build/tests/#\${B}/tests/#g" -e "s#$build/gcnlab#\${B}/bin/gcnlab#g" \
        -e "s#$root/tests/cli/#\${B}/tests/cli/#g" -e "s#$root/scripts/#\${B}/scripts/#g" -e "s#GCNLAB_SOURCE_DIR=$root#GCNLAB_SOURCE_DIR=\${B}#g" \
        -e "s#\"$(command -v mpiexec)\"#\"\${B}/bin/mpiexec\"#g" -e "s#MPIEXEC=$(command -v mpiexec)#MPIEXEC=\${B}/bin/mpiexec#g" \
        -e "s#CTEST=[^;]*;#CTEST=ctest;#" -e "s#PYTHON=[^;]*;#PYTHON=python3;#" -e 's# _BACKTRACE_TRIPLES "[^"]*"##'
} > "$out/tests/CTestTestfile.cmake"
grep -q "$root" "$out/tests/CTestTestfile.cmake" && { echo "bundle: a build path is left in the tests' file" >&2; exit 1; }

cat > "$out/env.sh" <<EOF
# Source this file on the GPU node (bash): gcnlab, Open MPI and the libraries
# this bundle carries, plus the node's own CUDA libraries (scripts/bundle.sh).
gcnlab_bundle=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
export GCNLAB_BUNDLE=\$gcnlab_bundle            # for tests/CTestTestfile.cmake
export OPAL_PREFIX=\$gcnlab_bundle              # Open MPI relocated: its plugins and help texts here
export PATH=\$gcnlab_bundle/bin:\$PATH
gcnlab_libs=\$gcnlab_bundle/lib
# Each CUDA library gcnlab was linked with: found by the loader already, or in
# the toolkit, or in a Python's NVIDIA wheels (torch installs them).
gcnlab_dirs="\${CUDA_HOME:+\$CUDA_HOME/lib64} /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib"
for gcnlab_py in python3 /usr/bin/python3; do
  gcnlab_dirs+=" \$(\$gcnlab_py -c 'import nvidia, os; print(" ".join(os.path.join(p, d) for p in nvidia.__path__ for d, _, fs in os.walk(p) if any(f.startswith("lib") and ".so" in f for f in fs)))' 2>/dev/null)"
done
for gcnlab_so in $needed; do
  ldconfig -p 2>/dev/null | grep -q "\$gcnlab_so " && continue
  gcnlab_found=
  for gcnlab_d in \$gcnlab_dirs; do
    if [ -e "\$gcnlab_d/\$gcnlab_so" ]; then gcnlab_found=\$gcnlab_d; break; fi
  done
  if [ -n "\$gcnlab_found" ]; then
    case ":\$gcnlab_libs:" in *":\$gcnlab_found:"*) ;; *) gcnlab_libs+=":\$gcnlab_found" ;; esac
  else
    echo "gcnlab bundle: \$gcnlab_so not found on this node (set CUDA_HOME, or rebuild the bundle with --with-nccl for NCCL)" >&2
  fi
done
export LD_LIBRARY_PATH=\$gcnlab_libs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
unset gcnlab_dirs gcnlab_so gcnlab_found gcnlab_libs gcnlab_d gcnlab_py
EOF

echo "bundle: $out ($(du -sh "$out" | cut -f1); CUDA libraries from the node: $needed)"
if [ $tar = 1 ]; then
  tar -C "$(dirname "$out")" -czf "$out.tar.gz" "$(basename "$out")"
  echo "bundle: $out.tar.gz ($(du -sh "$out.tar.gz" | cut -f1))"
fi

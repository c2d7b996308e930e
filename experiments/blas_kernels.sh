# Sourced by bench.sh and bench_models.sh (after they set $gcnlab): the OpenBLAS kernels that gcnlab and
# PyTorch both run in a bench. OPENBLAS_CORETYPE as the caller left it, else gcnlab's choice for this CPU
# (OpenBLAS's, or on a CPU it does not know the kernels of its vector units: backends/cpu/blas_kernels.hpp).
# cpu_core is that choice whatever the caller set, so that a summary can say when a pin inherited from
# the environment differs from it: on an AMD EPYC (Zen 5) an inherited Haswell made GraphSAGE's GEMMs
# 1.7x slower than the CPU's own Cooperlake kernels (docs/performance.md).
cpu_core=$(env -u OPENBLAS_CORETYPE "$gcnlab" --version | sed -n 's/^blas kernels: \([A-Za-z0-9]*\).*/\1/p')
OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$cpu_core}
export OPENBLAS_CORETYPE
# One line for a summary where the kernels benched are not the CPU's own; nothing where they are.
kernels_note() {
  [ "$OPENBLAS_CORETYPE" = "$cpu_core" ] ||
    printf '\nOpenBLAS kernels: %s, from OPENBLAS_CORETYPE in the environment; %s (unset it for those).\n' \
      "$OPENBLAS_CORETYPE" "this CPU's own are $cpu_core"
}

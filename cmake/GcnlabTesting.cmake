# Test registration helpers (after heFFTe's heffte_add_mpi_test).
#
# The OpenMPI environment for oversubscribed single-machine runs lives here,
# in each test's ENVIRONMENT, not in users' shells (docs/testing.md: the OpenMPI settings).
set(GCNLAB_TEST_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  OMPI_MCA_rmaps_base_oversubscribe=1
  OMPI_MCA_mpi_yield_when_idle=1
  OMPI_MCA_btl=self,vader
  OMP_NUM_THREADS=1
  OPENBLAS_NUM_THREADS=1
  GCNLAB=$<TARGET_FILE:gcnlab>
  MPIEXEC=${MPIEXEC_EXECUTABLE}
  CTEST=${CMAKE_CTEST_COMMAND}
  PYTHON=/usr/bin/python3
  GCNLAB_SOURCE_DIR=${CMAKE_SOURCE_DIR}
)
if(DEFINED ENV{GCNLAB_DATA_DIR})
  list(APPEND GCNLAB_TEST_ENV GCNLAB_DATA_DIR=$ENV{GCNLAB_DATA_DIR})
endif()
if(DEFINED ENV{LSAN_OPTIONS})
  list(APPEND GCNLAB_TEST_ENV LSAN_OPTIONS=$ENV{LSAN_OPTIONS})
endif()
# 600: the 8-rank suites take ~2 min on a quiet 2-core machine and up to 4x that beside a -j4 build.
set(GCNLAB_TEST_TIMEOUT 600 CACHE STRING "Per-test timeout in seconds (an MPI test whose ranks diverge hangs until then)")

# gcnlab_add_mpi_test(NAME TARGET RANKS n... [ARGS catch-args...] [LABELS l...] [ENV VAR=value...]
#                     [LAUNCHER command...])
# registers NAME_np<n> running TARGET under mpiexec with n ranks (each rank through LAUNCHER where given).
function(gcnlab_add_mpi_test name target)
  cmake_parse_arguments(T "" "" "RANKS;ARGS;LABELS;ENV;LAUNCHER" ${ARGN})
  set(env ${GCNLAB_TEST_ENV} ${T_ENV})
  foreach(np IN LISTS T_RANKS)
    add_test(NAME ${name}_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${T_LAUNCHER} $<TARGET_FILE:${target}> ${T_ARGS})
    set_tests_properties(${name}_np${np} PROPERTIES
      ENVIRONMENT "${env}" TIMEOUT ${GCNLAB_TEST_TIMEOUT} LABELS "mpi;${T_LABELS}")
  endforeach()
endfunction()

# gcnlab_add_script_test(NAME SCRIPT [LABELS l...]) runs a bash script with the test environment.
function(gcnlab_add_script_test name script)
  cmake_parse_arguments(T "" "" "LABELS;ARGS" ${ARGN})
  add_test(NAME ${name} COMMAND bash ${script} ${T_ARGS})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "${GCNLAB_TEST_ENV}" TIMEOUT ${GCNLAB_TEST_TIMEOUT} LABELS "cli;${T_LABELS}"
    SKIP_RETURN_CODE 77)
endfunction()

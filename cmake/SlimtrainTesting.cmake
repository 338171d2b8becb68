# Test registration for the four tiers. Every test gets a label (its tier) and a CTest TIMEOUT.
#
#   slimtrain_add_gtest(NAME n TIER unit|mpi|gpu SOURCES a.cpp ... [LIBS ...] [NP 2 4]
#                       [TIMEOUT seconds] [CASE_TIMEOUT seconds] [ENV K=V ...])
#   slimtrain_add_e2e(NAME n COMMAND ... [TIMEOUT seconds] [LABELS extra ...] [ENV K=V ...])
#
# mpi tests run under mpiexec once per NP value, print from rank 0 only and carry a watchdog
# (tests/support/mpi_test_main.cpp) that fails a test case running past CASE_TIMEOUT, naming it.

set(SLIMTRAIN_TEST_ENV
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
    SLIMTRAIN_TORCH_VERSION=${Torch_VERSION_MAJOR}.${Torch_VERSION_MINOR})
if(SLIMTRAIN_SANITIZE)
  # Open MPI and LibTorch keep process-lifetime allocations that LeakSanitizer would report.
  list(APPEND SLIMTRAIN_TEST_ENV ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
       UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
endif()

# One target per tier builds only that tier's test programs: scripts/sanitize.sh builds the unit
# and mpi tiers under ASan/UBSan without the binary, the benchmarks or the e2e helpers.
foreach(tier unit mpi gpu)
  if(NOT TARGET slimtrain_tests_${tier})
    add_custom_target(slimtrain_tests_${tier})
  endif()
endforeach()

function(slimtrain_add_gtest)
  cmake_parse_arguments(T "" "NAME;TIER;TIMEOUT;CASE_TIMEOUT" "SOURCES;LIBS;NP;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  if(NOT T_CASE_TIMEOUT)
    set(T_CASE_TIMEOUT 60)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  if(TARGET slimtrain_tests_${T_TIER})
    add_dependencies(slimtrain_tests_${T_TIER} ${T_NAME})
  endif()
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest)
  set(env ${SLIMTRAIN_TEST_ENV} SLIMTRAIN_TEST_CASE_TIMEOUT=${T_CASE_TIMEOUT} ${T_ENV})

  if(T_TIER STREQUAL "mpi")
    target_link_libraries(${T_NAME} PRIVATE slimtrain_mpi_test_main)
    if(NOT T_NP)
      set(T_NP 2 4)
    endif()
    foreach(np IN LISTS T_NP)
      set(test ${T_NAME}_np${np})
      add_test(NAME ${test}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                       ${SLIMTRAIN_MPIEXEC_EXTRA_FLAGS} ${MPIEXEC_PREFLAGS}
                       $<TARGET_FILE:${T_NAME}> ${MPIEXEC_POSTFLAGS})
      set_tests_properties(${test} PROPERTIES LABELS mpi TIMEOUT ${T_TIMEOUT}
                                              PROCESSORS ${np} ENVIRONMENT "${env}")
    endforeach()
  elseif(T_TIER STREQUAL "unit" OR T_TIER STREQUAL "gpu")
    target_link_libraries(${T_NAME} PRIVATE GTest::gtest_main)
    add_test(NAME ${T_NAME} COMMAND ${T_NAME})
    set_tests_properties(${T_NAME} PROPERTIES LABELS ${T_TIER} TIMEOUT ${T_TIMEOUT}
                                              ENVIRONMENT "${env}")
    if(T_TIER STREQUAL "gpu")
      # A gtest that skipped every case shows as "Skipped" in CTest, not as a pass.
      set_tests_properties(${T_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\] [0-9]+ test")
    endif()
  else()
    message(FATAL_ERROR "slimtrain_add_gtest(${T_NAME}): TIER must be unit, mpi or gpu")
  endif()
endfunction()

function(slimtrain_add_e2e)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "COMMAND;LABELS;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_test(NAME ${T_NAME} COMMAND ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES
    LABELS "e2e;${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    SKIP_RETURN_CODE 77
    ENVIRONMENT "${SLIMTRAIN_TEST_ENV};SLIMTRAIN_BIN=$<TARGET_FILE:slimtrain>;MPIEXEC=${MPIEXEC_EXECUTABLE};SLIMTRAIN_SOURCE_DIR=${PROJECT_SOURCE_DIR};${T_ENV}")
endfunction()

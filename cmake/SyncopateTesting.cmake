# Helpers for tests. Tests that run CUDA programs run them on simgpu: its folder comes first
# on LD_LIBRARY_PATH. Multi-rank tests run under mpirun with the flags CI needs (root,
# more ranks than cores).

set(SYNCOPATE_TEST_ENV
  "LD_LIBRARY_PATH=${SYNCOPATE_SIMGPU_LIB_DIR}"
  "OMPI_ALLOW_RUN_AS_ROOT=1"
  "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  "OMPI_MCA_rmaps_base_oversubscribe=1"
  "SYNCOPATE_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
  "SYNCOPATE_BUILD_DIR=${PROJECT_BINARY_DIR}")

# syncopate_add_gtest(target SOURCES ... LIBS ... [ON_SIMGPU] [LABELS ...])
# Builds a GoogleTest executable and registers its tests with ctest.
function(syncopate_add_gtest target)
  cmake_parse_arguments(arg "ON_SIMGPU" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${target} ${arg_SOURCES})
  target_link_libraries(${target} PRIVATE GTest::gtest_main GTest::gmock ${arg_LIBS})
  syncopate_target_warnings(${target})
  if(arg_ON_SIMGPU)
    # gtest_discover_tests flattens a list-valued ENVIRONMENT property to its first entry, so
    # the environment is applied by `cmake -E env` around both discovery and every run.
    set_target_properties(${target} PROPERTIES
      CROSSCOMPILING_EMULATOR "${CMAKE_COMMAND};-E;env;${SYNCOPATE_TEST_ENV}")
  endif()
  gtest_discover_tests(${target} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${arg_LABELS}")
endfunction()

# syncopate_add_mpi_test(NAME name NP n COMMAND exe args... [LABELS ...] [TIMEOUT s])
# Runs `mpirun -np n exe args...` on simgpu.
function(syncopate_add_mpi_test)
  cmake_parse_arguments(arg "" "NAME;NP;TIMEOUT" "COMMAND;LABELS" ${ARGN})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  add_test(NAME ${arg_NAME}
    COMMAND ${SYNCOPATE_MPIEXEC} -np ${arg_NP} ${SYNCOPATE_MPIRUN_FLAGS}
            -x LD_LIBRARY_PATH -x SIMGPU_PROFILE ${arg_COMMAND})
  set_tests_properties(${arg_NAME} PROPERTIES
    ENVIRONMENT "${SYNCOPATE_TEST_ENV}" TIMEOUT ${arg_TIMEOUT} LABELS "mpi;${arg_LABELS}")
endfunction()

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

# The real public data (traces, third-party headers) that some tests read in place, never
# copied into the repository: the shared folder beside it.
set(SYNCOPATE_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared")

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
  gtest_discover_tests(${target} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60)
  # gtest_discover_tests flattens list-valued PROPERTIES too (LABELS "a;b" would keep "a"), so
  # the labels are set by a file that ctest reads after the one that adds the discovered tests:
  # it walks the list of their names that file defines (<target>_TESTS).
  if(arg_LABELS)
    set(labels_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake")
    file(WRITE "${labels_file}"
      "foreach(test IN LISTS ${target}_TESTS)\n"
      "  set_tests_properties(\"\${test}\" PROPERTIES LABELS \"${arg_LABELS}\")\n"
      "endforeach()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_file}")
  endif()
endfunction()

# syncopate_add_mpi_test(NAME name NP n COMMAND exe args... [LABELS ...] [TIMEOUT s])
# Runs `mpirun -np n exe args...` on simgpu.
function(syncopate_add_mpi_test)
  cmake_parse_arguments(arg "" "NAME;NP;TIMEOUT" "COMMAND;LABELS" ${ARGN})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  # Through scripts/run-on-simgpu.sh, which forwards SIMGPU_PROFILE only when it is set
  # (mpirun warns about `-x` of an unset variable).
  add_test(NAME ${arg_NAME}
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/run-on-simgpu.sh -np ${arg_NP} ${arg_COMMAND})
  string(REPLACE ";" " " mpirun_flags "${SYNCOPATE_MPIRUN_FLAGS}")
  set_tests_properties(${arg_NAME} PROPERTIES
    ENVIRONMENT "${SYNCOPATE_TEST_ENV};SYNCOPATE_MPIEXEC=${SYNCOPATE_MPIEXEC};SYNCOPATE_MPIRUN_FLAGS=${mpirun_flags}"
    TIMEOUT ${arg_TIMEOUT} LABELS "mpi;${arg_LABELS}")
endfunction()

# syncopate_add_qtest(target SOURCES ... LIBS ... [LABELS ...] [TIMEOUT s])
# Builds a QtTest executable (one test class, QTEST_MAIN) and runs it on Qt's offscreen
# platform, so GUI tests need no display.
function(syncopate_add_qtest target)
  cmake_parse_arguments(arg "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 120)
  endif()
  add_executable(${target} ${arg_SOURCES})
  set_target_properties(${target} PROPERTIES AUTOMOC ON)
  target_link_libraries(${target} PRIVATE Qt6::Test ${arg_LIBS})
  syncopate_target_warnings(${target})
  add_test(NAME ${target} COMMAND ${target})
  set_tests_properties(${target} PROPERTIES
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;SYNCOPATE_SOURCE_DIR=${PROJECT_SOURCE_DIR};SYNCOPATE_BUILD_DIR=${PROJECT_BINARY_DIR}"
    LABELS "gui;${arg_LABELS}" TIMEOUT ${arg_TIMEOUT})
endfunction()

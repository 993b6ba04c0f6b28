# cmake -DBUILD_DIR=<build> -DTESTS=<ctest -R regex> -DLABELS=<a,b> -P CheckTestLabels.cmake
# Fails unless every test matching TESTS carries each of LABELS (ctest -L finds it by each):
# guards syncopate_add_gtest's labels against gtest discovery keeping only the first.
function(count_tests out)
  execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${BUILD_DIR} -N -R ${TESTS} ${ARGN}
    OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT listing MATCHES "Total Tests: ([0-9]+)")
    message(FATAL_ERROR "ctest -N -R ${TESTS} ${ARGN} failed:\n${listing}")
  endif()
  set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

string(REPLACE "," ";" labels "${LABELS}")
count_tests(all)
if(all EQUAL 0)
  message(FATAL_ERROR "no test matches ${TESTS}")
endif()
foreach(label IN LISTS labels)
  count_tests(labelled -L "^${label}$")
  if(NOT labelled EQUAL all)
    message(FATAL_ERROR "${labelled} of the ${all} tests matching ${TESTS} carry label ${label}")
  endif()
endforeach()
message(STATUS "all ${all} tests matching ${TESTS} carry ${LABELS}")

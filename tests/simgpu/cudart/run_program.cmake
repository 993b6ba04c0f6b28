# Runs PROGRAM and fails unless it exits with 0 and its output matches EXPECT (so that a crash
# at exit fails the test even after the program printed its results).
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
if(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output of ${PROGRAM} does not match: ${EXPECT}")
endif()

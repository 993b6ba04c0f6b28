# `syncopate gui` end to end: a headless screenshot of a written run exits 0 and writes a PNG;
# a missing or corrupt run, or a syncopate without syncopate-gui beside it, exits non-zero with
# "syncopate gui: ..." on stderr, and no PNG; so
# does --open summary before the run is analysed, and after it the summary opens.
# cmake -DSYNCOPATE=... -DRUN=... -DWORK=... -P cli_gui_test.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/garbage)
file(WRITE ${WORK}/garbage/rank-0.sqlite "not a database")

function(expect_failure name)
  execute_process(COMMAND ${SYNCOPATE} gui ${ARGN} --screenshot ${WORK}/${name}.png
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(rc EQUAL 0)
    message(FATAL_ERROR "syncopate gui ${ARGN}: exit code 0, expected a failure")
  endif()
  if(NOT err MATCHES "^syncopate gui: ")
    message(FATAL_ERROR "syncopate gui ${ARGN}: stderr does not start with 'syncopate gui: ': ${err}")
  endif()
  if(EXISTS ${WORK}/${name}.png)
    message(FATAL_ERROR "syncopate gui ${ARGN}: wrote a screenshot despite failing")
  endif()
endfunction()

expect_failure(missing ${WORK}/no-such-run)

# `syncopate gui` runs syncopate-gui from its own folder: a syncopate without it says so.
file(MAKE_DIRECTORY ${WORK}/alone)
file(COPY ${SYNCOPATE} DESTINATION ${WORK}/alone)
get_filename_component(syncopate_name ${SYNCOPATE} NAME)
execute_process(COMMAND ${WORK}/alone/${syncopate_name} gui ${RUN} --screenshot ${WORK}/alone.png
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(rc EQUAL 0 OR NOT err MATCHES "^syncopate gui: cannot run .*/alone/syncopate-gui [(]No such file or directory[)]")
  message(FATAL_ERROR "syncopate gui without syncopate-gui beside it (${rc}): ${err}")
endif()
expect_failure(garbage ${WORK}/garbage)
expect_failure(iteration ${RUN} --iteration 99)
expect_failure(hide ${RUN} --hide everything)

execute_process(COMMAND ${SYNCOPATE} gui ${RUN} --screenshot ${WORK}/good.png --size 1000x700 --iteration 2 --hide nvtx,threads
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "syncopate gui on a good run failed (${rc}): ${err}")
endif()
file(READ ${WORK}/good.png magic LIMIT 8 HEX)
if(NOT magic STREQUAL "89504e470d0a1a0a")
  message(FATAL_ERROR "the screenshot is not a PNG (starts with ${magic})")
endif()

# --open summary: refused with the reader's sentence before the run is analysed, then opened on
# the results `syncopate analyze` wrote.
expect_failure(unanalysed ${RUN} --open summary)
execute_process(COMMAND ${SYNCOPATE} gui ${RUN} --open summary --screenshot ${WORK}/unanalysed.png
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT err MATCHES "has no analysis.sqlite: run 'syncopate analyze ")
  message(FATAL_ERROR "syncopate gui --open summary on a run never analysed says: ${err}")
endif()
expect_failure(open_mode ${RUN} --open partly)
execute_process(COMMAND ${SYNCOPATE} analyze ${RUN} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "syncopate analyze on the sample run failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${SYNCOPATE} gui ${RUN} --open summary --screenshot ${WORK}/summary.png --size 1000x700
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS ${WORK}/summary.png)
  message(FATAL_ERROR "syncopate gui --open summary on the analysed run failed (${rc}): ${err}")
endif()

# Generates, from the CUDA toolkit's libcupti.so.13:
#  - cupti_exports.map: the version script of the drop-in, every function the toolkit's library
#    exports under its version node;
#  - not_simulated.cpp: a weak definition of each of them that reports
#    "simgpu: <name> is not simulated" once and returns CUPTI_ERROR_NOT_SUPPORTED; the functions
#    simgpu implements override them with strong definitions at link time.
# Inputs: NM, CUPTI_LIBRARY, OUTPUT_DIR.
execute_process(
  COMMAND ${NM} -D --defined-only ${CUPTI_LIBRARY}
  OUTPUT_VARIABLE symbols_text
  RESULT_VARIABLE nm_result)
if(NOT nm_result EQUAL 0)
  message(FATAL_ERROR "cannot list the symbols of ${CUPTI_LIBRARY} with ${NM}")
endif()

string(REGEX MATCHALL "[0-9a-f]+ [TW] [A-Za-z0-9_]+@@?libcupti\\.so\\.[0-9]+" entries "${symbols_text}")
set(names "")
set(version_node "")
foreach(entry IN LISTS entries)
  string(REGEX REPLACE "^[0-9a-f]+ [TW] ([A-Za-z0-9_]+)@@?(libcupti\\.so\\.[0-9]+)$" "\\1;\\2" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 version_node)
  list(APPEND names ${name})
endforeach()
list(REMOVE_DUPLICATES names)
list(SORT names)
list(LENGTH names count)
if(count LESS 50)
  message(FATAL_ERROR "found only ${count} functions in ${CUPTI_LIBRARY}")
endif()

set(map "/* Generated from ${CUPTI_LIBRARY}: its exported functions and version node. */\n")
string(APPEND map "${version_node} {\n  global:\n")
set(stubs "/* Generated from ${CUPTI_LIBRARY}: a weak stand-in for each of its ${count} functions. */\n")
string(APPEND stubs "#include \"not_simulated.h\"\n\n")
foreach(name IN LISTS names)
  string(APPEND map "    ${name};\n")
  string(APPEND stubs "SIMGPU_CUPTI_NOT_SIMULATED(${name})\n")
endforeach()
string(APPEND map "  local:\n    *;\n};\n")

file(WRITE ${OUTPUT_DIR}/cupti_exports.map.tmp "${map}")
file(WRITE ${OUTPUT_DIR}/not_simulated.cpp.tmp "${stubs}")
foreach(f cupti_exports.map not_simulated.cpp)
  file(COPY_FILE ${OUTPUT_DIR}/${f}.tmp ${OUTPUT_DIR}/${f} ONLY_IF_DIFFERENT)
  file(REMOVE ${OUTPUT_DIR}/${f}.tmp)
endforeach()

# Generates, from the CUDA toolkit itself:
#  - the version script of the drop-in libcudart.so.13: every function the toolkit's
#    libcudart.so.13 exports, under its version node;
#  - not_simulated.cpp: a weak definition of each of those functions that reports
#    "simgpu: <name> is not simulated" once and returns cudaErrorNotSupported; the functions
#    simgpu implements override them with strong definitions at link time;
#  - error_names.inc: the cudaError_t enumerators of driver_types.h with their names.
# Inputs: NM, CUDART_LIBRARY, DRIVER_TYPES_H, OUTPUT_DIR.
execute_process(
  COMMAND ${NM} -D --defined-only ${CUDART_LIBRARY}
  OUTPUT_VARIABLE symbols_text
  RESULT_VARIABLE nm_result)
if(NOT nm_result EQUAL 0)
  message(FATAL_ERROR "cannot list the symbols of ${CUDART_LIBRARY} with ${NM}")
endif()

string(REGEX MATCHALL "[0-9a-f]+ [TW] [A-Za-z0-9_]+@@?libcudart\\.so\\.[0-9]+" entries "${symbols_text}")
set(names "")
set(version_node "")
foreach(entry IN LISTS entries)
  string(REGEX REPLACE "^[0-9a-f]+ [TW] ([A-Za-z0-9_]+)@@?(libcudart\\.so\\.[0-9]+)$" "\\1;\\2" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 version_node)
  list(APPEND names ${name})
endforeach()
list(REMOVE_DUPLICATES names)
list(SORT names)
list(LENGTH names count)
if(count LESS 100)
  message(FATAL_ERROR "found only ${count} functions in ${CUDART_LIBRARY}")
endif()

set(map "/* Generated from ${CUDART_LIBRARY}: its exported functions and version node. */\n")
string(APPEND map "${version_node} {\n  global:\n")
set(stubs "/* Generated from ${CUDART_LIBRARY}: a weak stand-in for each of its ${count} functions. */\n")
string(APPEND stubs "#include \"not_simulated.h\"\n\n")
foreach(name IN LISTS names)
  string(APPEND map "    ${name};\n")
  string(APPEND stubs "SIMGPU_NOT_SIMULATED(${name})\n")
endforeach()
string(APPEND map "  local:\n    *;\n};\n")

file(READ ${DRIVER_TYPES_H} driver_types)
string(REGEX MATCH "enum __device_builtin__ cudaError\n{[^}]*}" error_enum "${driver_types}")
string(REGEX MATCHALL "(cuda(Success|Error[A-Za-z0-9]+)) *= *[0-9]+" enumerators "${error_enum}")
set(errors "/* Generated from ${DRIVER_TYPES_H}: the cudaError_t enumerators. */\n")
foreach(e IN LISTS enumerators)
  string(REGEX REPLACE " *=.*" "" e_name "${e}")
  string(APPEND errors "{${e_name}, \"${e_name}\"},\n")
endforeach()

file(WRITE ${OUTPUT_DIR}/cudart_exports.map.tmp "${map}")
file(WRITE ${OUTPUT_DIR}/not_simulated.cpp.tmp "${stubs}")
file(WRITE ${OUTPUT_DIR}/error_names.inc.tmp "${errors}")
foreach(f cudart_exports.map not_simulated.cpp error_names.inc)
  file(COPY_FILE ${OUTPUT_DIR}/${f}.tmp ${OUTPUT_DIR}/${f} ONLY_IF_DIFFERENT)
  file(REMOVE ${OUTPUT_DIR}/${f}.tmp)
endforeach()

# Generates, from the CUDA toolkit itself:
#  - the version script of the drop-in libcudart.so.13: every function the toolkit's
#    libcudart.so.13 exports, under its version node;
#  - not_simulated.cpp: a weak definition of each of those functions that reports
#    "simgpu: <name> is not simulated" once and returns cudaErrorNotSupported; the functions
#    simgpu implements override them with strong definitions at link time;
#  - error_names.inc: the cudaError_t enumerators of driver_types.h with their names.
# Inputs: NM, CUDART_LIBRARY, DRIVER_TYPES_H, OUTPUT_DIR.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/library_exports.cmake)
simgpu_library_exports(${CUDART_LIBRARY} libcudart.so 100 SIMGPU_NOT_SIMULATED map stubs)

file(READ ${DRIVER_TYPES_H} driver_types)
string(REGEX MATCH "enum __device_builtin__ cudaError\n{[^}]*}" error_enum "${driver_types}")
string(REGEX MATCHALL "(cuda(Success|Error[A-Za-z0-9]+)) *= *[0-9]+" enumerators "${error_enum}")
set(errors "/* Generated from ${DRIVER_TYPES_H}: the cudaError_t enumerators. */\n")
foreach(e IN LISTS enumerators)
  string(REGEX REPLACE " *=.*" "" e_name "${e}")
  string(APPEND errors "{${e_name}, \"${e_name}\"},\n")
endforeach()

simgpu_write_generated(${OUTPUT_DIR} cudart_exports.map map not_simulated.cpp stubs error_names.inc errors)

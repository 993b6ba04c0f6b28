# Generates, from the CUDA toolkit's libcupti.so.13:
#  - cupti_exports.map: the version script of the drop-in, every function the toolkit's library
#    exports under its version node;
#  - not_simulated.cpp: a weak definition of each of them that reports
#    "simgpu: <name> is not simulated" once and returns CUPTI_ERROR_NOT_SUPPORTED; the functions
#    simgpu implements override them with strong definitions at link time.
# Inputs: NM, CUPTI_LIBRARY, OUTPUT_DIR.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/library_exports.cmake)
simgpu_library_exports(${CUPTI_LIBRARY} libcupti.so 50 SIMGPU_CUPTI_NOT_SIMULATED map stubs)
simgpu_write_generated(${OUTPUT_DIR} cupti_exports.map map not_simulated.cpp stubs)

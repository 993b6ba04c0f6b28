# Fails unless simgpu's libnccl.so.2 exports exactly what the toolkit's does, with the same
# binding: pncclX strong (T), ncclX weak (W), plus the toolkit's few plain strong symbols.
# Inputs: NM, TOOLKIT, SIMGPU.
function(exported_functions library out)
  execute_process(COMMAND ${NM} -D --defined-only ${library} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot read the symbols of ${library}")
  endif()
  string(REGEX MATCHALL "[TW] p?nccl[A-Za-z0-9_]+" found "${text}")
  list(SORT found)
  set(${out} ${found} PARENT_SCOPE)
endfunction()

exported_functions(${TOOLKIT} toolkit)
exported_functions(${SIMGPU} simgpu)
set(missing ${toolkit})
list(REMOVE_ITEM missing ${simgpu})
set(extra ${simgpu})
list(REMOVE_ITEM extra ${toolkit})
if(missing OR extra)
  message(FATAL_ERROR "simgpu's libnccl.so.2 differs from ${TOOLKIT}: missing [${missing}], extra [${extra}]")
endif()
list(LENGTH toolkit count)
message(STATUS "the ${count} NCCL symbols of ${TOOLKIT} are exported with the same binding")

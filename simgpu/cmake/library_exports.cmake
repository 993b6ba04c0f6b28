# What a drop-in library needs from the real one it replaces, read from the toolkit's own
# library (included by the generators of simgpu's libcudart and libcupti, run with cmake -P):
#
# simgpu_library_exports(LIBRARY soname_stem min_count stub_macro map_var stubs_var)
#   lists with NM every function LIBRARY exports under its version node (soname_stem: the
#   soname without its version, e.g. libcudart.so) and sets, in the caller's scope,
#   - map_var: the version script that exports the same functions under the same node;
#   - stubs_var: a source that defines each of them through stub_macro (a weak stand-in
#     reporting that the function is not simulated; simgpu's own definitions override it).
#   Fails when fewer than min_count functions are found (a wrong or stripped library).
#
# simgpu_write_generated(DIR FILE VAR [FILE VAR ...])
#   writes each FILE in DIR with the content of the caller's variable VAR, only when it changed,
#   so that an unchanged toolkit rebuilds nothing. (Variables are named, not expanded: the
#   contents hold semicolons, which an argument list would split.)
function(simgpu_library_exports library soname_stem min_count stub_macro map_var stubs_var)
  execute_process(
    COMMAND ${NM} -D --defined-only ${library}
    OUTPUT_VARIABLE symbols_text
    RESULT_VARIABLE nm_result)
  if(NOT nm_result EQUAL 0)
    message(FATAL_ERROR "cannot list the symbols of ${library} with ${NM}")
  endif()
  string(REPLACE "." "\\." stem "${soname_stem}")
  string(REGEX MATCHALL "[0-9a-f]+ [TW] [A-Za-z0-9_]+@@?${stem}\\.[0-9]+" entries "${symbols_text}")
  set(names "")
  set(version_node "")
  foreach(entry IN LISTS entries)
    string(REGEX REPLACE "^[0-9a-f]+ [TW] ([A-Za-z0-9_]+)@@?(${stem}\\.[0-9]+)$" "\\1;\\2" parts "${entry}")
    list(GET parts 0 name)
    list(GET parts 1 version_node)
    list(APPEND names ${name})
  endforeach()
  list(REMOVE_DUPLICATES names)
  list(SORT names)
  list(LENGTH names count)
  if(count LESS min_count)
    message(FATAL_ERROR "found only ${count} functions in ${library}")
  endif()

  set(map "/* Generated from ${library}: its exported functions and version node. */\n")
  string(APPEND map "${version_node} {\n  global:\n")
  set(stubs "/* Generated from ${library}: a weak stand-in for each of its ${count} functions. */\n")
  string(APPEND stubs "#include \"not_simulated.h\"\n\n")
  foreach(name IN LISTS names)
    string(APPEND map "    ${name};\n")
    string(APPEND stubs "${stub_macro}(${name})\n")
  endforeach()
  string(APPEND map "  local:\n    *;\n};\n")
  set(${map_var} "${map}" PARENT_SCOPE)
  set(${stubs_var} "${stubs}" PARENT_SCOPE)
endfunction()

function(simgpu_write_generated dir)
  set(pairs ${ARGN})
  while(pairs)
    list(POP_FRONT pairs file var)
    file(WRITE ${dir}/${file}.tmp "${${var}}")
    file(COPY_FILE ${dir}/${file}.tmp ${dir}/${file} ONLY_IF_DIFFERENT)
    file(REMOVE ${dir}/${file}.tmp)
  endwhile()
endfunction()

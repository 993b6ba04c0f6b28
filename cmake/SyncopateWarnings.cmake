# Warnings are errors in CI-facing builds: the tree stays warning-clean.
option(SYNCOPATE_WERROR "Treat warnings as errors" ON)

add_library(syncopate_warnings INTERFACE)
target_compile_options(syncopate_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                             -Wcast-align -Wunused -Woverloaded-virtual
                             -Wformat=2 -Wimplicit-fallthrough>
  $<$<AND:$<COMPILE_LANGUAGE:CXX,C>,$<NOT:$<BOOL:$<TARGET_PROPERTY:SYNCOPATE_NO_NULL_DEREFERENCE_WARNING>>>>:-Wnull-dereference>
  $<$<AND:$<COMPILE_LANGUAGE:CXX,C>,$<BOOL:${SYNCOPATE_WERROR}>>:-Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --Werror=all-warnings>)

# Sanitizer builds (see CMakePresets.json): SYNCOPATE_SANITIZE=address|undefined|thread.
set(SYNCOPATE_SANITIZE "" CACHE STRING "Sanitizer to build with (address, undefined, thread)")
if(SYNCOPATE_SANITIZE)
  # Quoted: an unquoted ";" would split the generator expression in two.
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX,C>:-fsanitize=${SYNCOPATE_SANITIZE};-fno-omit-frame-pointer>")
  add_link_options(-fsanitize=${SYNCOPATE_SANITIZE})
endif()

# Shared libraries are linked with every symbol resolved, so that a missing one fails the build
# rather than the program that loads them. Except where clang instruments them (sanitizers,
# libFuzzer's coverage): clang puts those runtimes only in executables, and the library's
# references to them resolve when an executable loads it.
if(SYNCOPATE_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(SYNCOPATE_NO_UNDEFINED "")
else()
  set(SYNCOPATE_NO_UNDEFINED "-Wl,--no-undefined")
endif()

# Give a target the project's warnings. Usage: syncopate_target_warnings(tgt [NO_NULL_DEREFERENCE])
# NO_NULL_DEREFERENCE is for targets built on CLI11, in whose inlined string splitting GCC 12
# reports null dereferences that cannot happen (false positives of its middle end). It is a
# target's, not a source file's, so that the target's sources still join in a unity build
# (CMake leaves files with options of their own out of it).
function(syncopate_target_warnings target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "NO_NULL_DEREFERENCE" "" "")
  target_link_libraries(${target} PRIVATE syncopate_warnings)
  if(arg_NO_NULL_DEREFERENCE)
    set_target_properties(${target} PROPERTIES SYNCOPATE_NO_NULL_DEREFERENCE_WARNING ON)
  endif()
endfunction()

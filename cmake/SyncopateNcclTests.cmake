# NVIDIA's nccl-tests, a real NCCL client nobody here wrote, read in place from the shared folder
# beside the repository (never copied into it, and read-only in CI) and built out of tree by its
# own build.sh into the build tree: ${PROJECT_BINARY_DIR}/nccl-tests/single (one process drives
# its devices) and .../mpi (MPI=1: one process per rank under mpirun).
#
# syncopate_add_nccl_tests(TARGET name TESTS all_reduce ...) defines the target `name` (built by
# default) whose outputs are the binaries <flavour>/<test>_perf, and sets SYNCOPATE_NCCL_TESTS_DIR
# (where the sources are) and SYNCOPATE_NCCL_TESTS_FOUND in the caller's scope. The binaries
# depend on every source file, so a build with nothing changed does nothing; make keeps each
# flavour's objects in its own folder. nvcc goes through CMAKE_CUDA_COMPILER_LAUNCHER (ccache)
# when one is set.
function(syncopate_add_nccl_tests)
  cmake_parse_arguments(arg "" "TARGET" "TESTS" ${ARGN})
  set(source_dir "${SYNCOPATE_SHARED_DIR}/third_party/nccl-tests")
  set(SYNCOPATE_NCCL_TESTS_DIR "${source_dir}" PARENT_SCOPE)
  if(NOT EXISTS "${source_dir}/build.sh")
    set(SYNCOPATE_NCCL_TESTS_FOUND FALSE PARENT_SCOPE)
    return()
  endif()
  set(SYNCOPATE_NCCL_TESTS_FOUND TRUE PARENT_SCOPE)

  file(GLOB_RECURSE sources CONFIGURE_DEPENDS
    "${source_dir}/src/*" "${source_dir}/verifiable/*" "${source_dir}/os/*")
  get_filename_component(cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)
  # Open MPI's prefix as the Makefile wants it: MPI_HOME/include/mpi.h and MPI_HOME/lib/libmpi.
  find_path(mpi_header_dir mpi.h HINTS ${MPI_C_INCLUDE_DIRS} NO_DEFAULT_PATH REQUIRED)
  get_filename_component(mpi_home "${mpi_header_dir}" DIRECTORY)
  cmake_host_system_information(RESULT jobs QUERY NUMBER_OF_LOGICAL_CORES)
  set(environment "CUDAToolkit_ROOT=${cuda_root}" "JOBS=${jobs}"
      "NVCC_GENCODE=-gencode=arch=compute_${SYNCOPATE_NCCL_TESTS_ARCH},code=sm_${SYNCOPATE_NCCL_TESTS_ARCH}")
  if(CMAKE_CUDA_COMPILER_LAUNCHER)
    # The Makefile takes NVCC from the environment and runs `which` and `--version` on it: a
    # one-line script that puts the launcher in front.
    set(nvcc "${PROJECT_BINARY_DIR}/nccl-tests/nvcc")
    list(JOIN CMAKE_CUDA_COMPILER_LAUNCHER " " launcher)
    file(CONFIGURE OUTPUT "${nvcc}" CONTENT "#!/bin/sh\nexec ${launcher} \"${cuda_root}/bin/nvcc\" \"$@\"\n" @ONLY)
    file(CHMOD "${nvcc}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
         WORLD_EXECUTE)
    list(APPEND environment "NVCC=${nvcc}")
  endif()

  set(all_binaries)
  foreach(flavour single mpi)
    set(out "${PROJECT_BINARY_DIR}/nccl-tests/${flavour}")
    set(binaries)
    foreach(test IN LISTS arg_TESTS)
      list(APPEND binaries "${out}/${test}_perf")
    endforeach()
    set(flavour_environment ${environment})
    if(flavour STREQUAL "mpi")
      list(APPEND flavour_environment "MPI=1" "MPI_HOME=${mpi_home}")
    endif()
    add_custom_command(OUTPUT ${binaries}
      COMMAND ${CMAKE_COMMAND} -E env ${flavour_environment} "${source_dir}/build.sh" "${out}" ${arg_TESTS}
      DEPENDS ${sources}
      COMMENT "Building NVIDIA's nccl-tests (${flavour}) out of tree"
      VERBATIM)
    list(APPEND all_binaries ${binaries})
  endforeach()
  add_custom_target(${arg_TARGET} ALL DEPENDS ${all_binaries})
endfunction()

# The GPU architecture nccl-tests are compiled for (one: they only need to link and load here).
set(SYNCOPATE_NCCL_TESTS_ARCH 90 CACHE STRING "GPU architecture (sm_XX) nccl-tests are built for")

# Every dependency comes from Debian packages (scripts/install-deps.sh) or the CUDA toolkit.
# docs/architecture.md ("Dependencies") says why each one is here.
find_package(CUDAToolkit 13 REQUIRED)      # headers of cudart, CUPTI, NVTX 3, NCCL
find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)             # the run store
find_package(nlohmann_json 3.11 REQUIRED)  # profiles, plans, meta.json, --json output
find_package(fmt REQUIRED)                 # formatting in tools (never in hot paths)
find_package(CLI11 REQUIRED)               # the command line
find_package(MPI REQUIRED COMPONENTS C)    # samples bootstrap through Open MPI
find_package(simdjson REQUIRED)            # fast Kineto JSON import
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)  # fast gzip inflate
find_package(ZLIB REQUIRED)                # streaming gzip where libdeflate's whole-buffer API does not fit
if(SYNCOPATE_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(SYNCOPATE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
if(SYNCOPATE_BUILD_GUI)
  find_package(Qt6 6.4 REQUIRED COMPONENTS Core Gui Widgets Test Concurrent)
endif()

# NCCL ships no CMake config; its header and library live in the toolkit.
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} REQUIRED)
find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
if(NOT TARGET syncopate::nccl)
  add_library(syncopate::nccl UNKNOWN IMPORTED)
  set_target_properties(syncopate::nccl PROPERTIES
    IMPORTED_LOCATION ${NCCL_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
endif()

# Where mpirun is, with the flags every multi-rank test needs (root in CI, 4 ranks on 2 cores).
find_program(SYNCOPATE_MPIEXEC NAMES mpirun mpiexec REQUIRED)
set(SYNCOPATE_MPIRUN_FLAGS --oversubscribe --bind-to none --mca btl self,vader CACHE STRING "mpirun flags for tests")

#include "syncopate/analyzer/mpi_session.hpp"

#include <mpi.h>

#include <cstdlib>

namespace syncopate::analyzer {

bool startedByMpiLauncher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

trace::Result<MpiSession> MpiSession::start() {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    return trace::failure("MPI could not be initialised, although an MPI launcher started this process");
  // The reading threads never call MPI, but the main thread does while they run.
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    return trace::failure("the MPI library offers no thread support (MPI_THREAD_FUNNELED): distributed analysis "
                          "needs it; run `syncopate analyze --single-process DIR`");
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return MpiSession(rank, size);
}

MpiSession::MpiSession(MpiSession&& other) noexcept : rank_(other.rank_), size_(other.size_), owner_(other.owner_) {
  other.owner_ = false;
}

MpiSession::~MpiSession() {
  if (owner_) MPI_Finalize();
}

}  // namespace syncopate::analyzer

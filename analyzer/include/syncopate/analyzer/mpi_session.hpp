// MPI for distributed analysis, entered only when a launcher started this process: a plain
// `syncopate analyze` never initialises MPI (docs/architecture.md, "How MPI enters the product").
#pragma once

#include "syncopate/trace/status.hpp"

namespace syncopate::analyzer {

// Whether an MPI launcher (mpirun, srun, any PMI or PMIx launch) started this process, read from
// the environment it sets (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK), without calling MPI.
bool startedByMpiLauncher();

// MPI_COMM_WORLD from MPI_Init to MPI_Finalize; one per process, made only when
// startedByMpiLauncher(). Calls into MPI come from the thread that made it.
class MpiSession {
 public:
  static trace::Result<MpiSession> start();
  MpiSession(MpiSession&& other) noexcept;
  MpiSession& operator=(MpiSession&&) = delete;
  ~MpiSession();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }

 private:
  MpiSession(int rank, int size) : rank_(rank), size_(size) {}
  int rank_ = 0, size_ = 1;
  bool owner_ = true;  // finalizes MPI when destroyed
};

}  // namespace syncopate::analyzer

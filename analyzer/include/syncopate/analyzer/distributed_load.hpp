// Loading a run across the processes of an MPI job: each process reads the stores given to it
// (those it can see, in contiguous blocks of the store list) where they lie, and sends their rows
// to the root, which builds the same RunModel as loadRun() of the whole directory. A store its
// process cannot read is left out and named (the model is then partial); the processes agree on
// every other failure, so none waits for another that gave up.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "syncopate/analyzer/mpi_session.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace syncopate::analyzer {

struct DistributedLoad {
  std::optional<RunModel> model;       // on the root only
  std::uint64_t bytes_exchanged = 0;   // on the root: sent by all processes, listings and rows
  std::vector<int> stores_per_process;  // how many stores each process read
  double root_read_s = 0;               // wall time the root spent reading its own stores
  std::vector<long> peak_rss_kb;        // on the root: each process's peak RSS once its part was done
                                        // (the root's when its model was built)
};

// Called by every process of the session with the same `run_dir`.
trace::Result<DistributedLoad> loadRunDistributed(const MpiSession& mpi, const std::filesystem::path& run_dir,
                                                  const LoadOptions& options = {});

// Which process reads each store (index into `stores`): its block's process when that one sees
// it, else the process that sees it with the fewest stores so far. Blocks are kStoresPerBlock
// consecutive stores (fewer when the stores are fewer than that per process), dealt to the
// processes in turn: a node's ranks stay together when ranks are numbered host by host, as
// launchers number them, and every process has its next block to read while the root takes the
// ones before. `sees[s][p]`: process p listed store s. -1 for a store nobody sees.
inline constexpr std::size_t kStoresPerBlock = 8;
std::vector<int> assignStores(const std::vector<std::vector<bool>>& sees, int processes);

}  // namespace syncopate::analyzer

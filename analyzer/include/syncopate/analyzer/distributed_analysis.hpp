// Analysing a run across the processes of an MPI job where each rank's rows stay in the process
// that read its store (docs/analyzer.md, "Distributed analysis"). Every process reads its stores
// and builds the model of its own ranks; the root builds the run's model from the stores'
// summaries (ranks, streams, threads, collectives and the ops that flow between streams),
// aligns the clocks and matches the collectives, and then takes each rank's iterations and
// metrics, and the legs of the critical path through its ranks, from the process that holds it.
// The root's memory and time follow the run's collectives and ranks, not its ops; the results are
// those of analyze() on the whole run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/mpi_session.hpp"
#include "syncopate/analyzer/run_loader.hpp"

namespace syncopate::analyzer {

struct DistributedAnalysis {
  std::optional<RunModel> model;       // on the root: the run's model built from the summaries
  std::optional<Analysis> analysis;    // on the root
  std::uint64_t bytes_exchanged = 0;   // on the root: sent by all processes
  std::size_t model_bytes = 0;         // on the root: what its model of the run holds (RunModel::bytes)
  std::vector<int> stores_per_process;  // how many stores each process read
  std::vector<int> batches_per_process;  // on the root: in how many batches each read its stores (rank_batches.hpp)
  std::vector<long> peak_rss_kb;        // on the root: each process's peak RSS once its part was done
  std::size_t path_legs = 0, path_rounds = 0;  // on the root: the critical path's legs, and the rounds
                                               // of exchanges they took (distributed_critical_path.hpp)
};

// Called by every process of the session with the same arguments. With the critical path, each
// process walks its ranks' legs of it and the root stitches them; a process's ranks must then fit
// the memory limit in one batch.
trace::Result<DistributedAnalysis> analyzeRunDistributed(const MpiSession& mpi, const std::filesystem::path& run_dir,
                                                         const LoadOptions& load, const AnalysisOptions& options);

// Which process reads each store (index into `stores`): its block's process when that one sees
// it, else the process that sees it with the fewest stores so far. Blocks are kStoresPerBlock
// consecutive stores (fewer when the stores are fewer than that per process), dealt to the
// processes in turn: a node's ranks stay together when ranks are numbered host by host, as
// launchers number them, and every process has its next block to read while the root takes the
// ones before. `sees[s][p]`: process p listed store s. -1 for a store nobody sees.
inline constexpr std::size_t kStoresPerBlock = 8;
std::vector<int> assignStores(const std::vector<std::vector<bool>>& sees, int processes);

}  // namespace syncopate::analyzer

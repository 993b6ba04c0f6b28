// Reading DIR/analysis.sqlite back: what `syncopate analyze` found, without loading a store.
// A viewer opens a run of a thousand ranks on these results (per rank and iteration, the
// ranks' clock alignment) and reads a rank's store only when its ops are wanted
// (docs/gui.md, "Opening a large run").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/trace/status.hpp"

namespace syncopate::analyzer {

// One row of the results' ranks table: a rank row of the analysed run.
struct StoredRank {
  std::int32_t rank = -1;
  std::string host;
  std::filesystem::path store;  // as the analysis named it
  std::int64_t to_aligned_ns = 0;
};

// One matched collective call across the ranks: the results' collectives table.
struct StoredCollective {
  std::int64_t comm_id = 0, seq = 0;
  std::string coll_type;                   // trace::toString(CollType): "all_reduce", "send", ...
  std::int32_t ranks = 0;                  // the ranks that took part
  std::int32_t expected = 0;               // the communicator's size (0 when unknown)
  bool complete = false;                   // every rank of the communicator took part
  std::int64_t first_arrival_ns = 0, last_arrival_ns = 0, end_ns = 0;  // aligned
};

struct StoredResults {
  std::vector<StoredRank> ranks;  // index: rank row, as in the analysed RunModel
  std::vector<StoredCollective> collectives;  // by match
  // The analysis as far as the results hold it: the iterations (source, marker and each rank's
  // windows), every rank in every iteration, and each rank's summary of those (totals, means,
  // collective wait). Kernels, stream idle, collectives and critical paths stay in the file.
  Analysis analysis;
};

// Fails with a sentence when DIR has no analysis.sqlite, the file is not one of a version this
// build reads, a row is out of range, or the results are of other stores than DIR holds or older
// than one of them (the run changed since it was analysed): each says to run
// `syncopate analyze DIR`.
trace::Result<StoredResults> readStoredResults(const std::filesystem::path& run_dir);

// Some ranks of an analysed run, on the clock alignment its analysis made from every rank:
// rank rows `rows` of `results` (ascending), of which the stores `read` marks are read from
// `run_dir` (the results name each store as `analyze` was given it) and the others give their
// rank alone (loadRanksOfRun). The model's rank row i is the results' row rows[i].
trace::Result<RunModel> loadStoredRanks(const std::filesystem::path& run_dir, const StoredResults& results,
                                        const std::vector<Index>& rows, const std::vector<bool>& read,
                                        const LoadOptions& options = {});

}  // namespace syncopate::analyzer

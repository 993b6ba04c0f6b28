// Loading a run directory (every rank-<R>.sqlite / pid-<P>.sqlite in it) into one RunModel,
// with clock alignment applied. Recorded and imported runs load the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "syncopate/analyzer/clock_alignment.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/phase_timings.hpp"
#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace syncopate::analyzer {

// Called as loading proceeds: `done` of `total` rows read so far ("what" names the stage).
using ProgressFn = std::function<void(std::string_view what, std::size_t done, std::size_t total)>;

struct LoadOptions {
  ClockAlignmentOptions clock;
  ProgressFn progress;  // may be empty
  PhaseTimings* timings = nullptr;  // when set, the load's phases are timed into it
  // The memory the model may take (modelBytesEstimate of the run's rows), in bytes; 0: no
  // limit. A run that needs more is refused with a sentence before it is read, or, when its rows
  // arrive from elsewhere (loadPackedRun), as soon as the rows received say so.
  std::uint64_t memory_limit = 0;
  // Unmatched event waits and syncs counted where their rows were read (a distributed analysis
  // builds the root's model from summaries without them), added to the model's count.
  UnmatchedEvents unmatched_events_elsewhere;
  // The stores given are one process's share of the run (a distributed analysis): its sentences
  // say "this process's stores", not "the run's".
  bool share_of_run = false;
};

// What a model of `ops` GPU ops and `api_calls` host calls takes at its peak while it is built:
// the op and call tables' columns, the launch index, and the orders that sort the larger table
// (docs/analyzer.md, "Memory"). Strings, ranges, syncs and collectives come on top; they are a
// few per cent of a run's rows.
std::uint64_t modelBytesEstimate(std::uint64_t ops, std::uint64_t api_calls);

// Each store of `run_dir`, in listStores' order, with its GPU ops and API calls counted without
// reading them (what loadRun checks against the memory limit before it reads). Fails as loadRun
// does for a directory without stores or a store that cannot be opened.
struct StoreRowCount {
  trace::StoreFile store;
  std::uint64_t ops = 0, api_calls = 0;
};
trace::Result<std::vector<StoreRowCount>> countStoreRows(const std::filesystem::path& run_dir);
trace::Result<StoreRowCount> countRows(const trace::StoreFile& store);

// The sentence of rows refused for the memory they would take: "<whose> N GPU ops and M API
// calls need about X in one process ..., more than the <limit> it may use (--memory-limit) ...".
std::string memoryLimitSentence(std::string_view whose, std::uint64_t ops, std::uint64_t api_calls, std::uint64_t limit);

// Fails with a sentence naming the file when the directory holds no store, or a store cannot
// be opened (not a store, unknown schema version, truncated) or is damaged.
trace::Result<RunModel> loadRun(const std::filesystem::path& run_dir, const LoadOptions& options = {});

// Some ranks' rows of a run whose ranks are known (from an earlier analysis of the whole run):
// `ranks` in rank-row order, each with its store_path; the stores of the ranks `read` marks are
// read, each rank in its row, and every other rank is its RankInfo alone, its store not opened.
// Clocks are not aligned: every time stays on its store's clock (to_aligned_ns 0), for the
// caller to move by the alignment the whole run was given (shiftRank). Fails as loadRun does
// for a store that cannot be read.
trace::Result<RunModel> loadRanksOfRun(const std::vector<RankInfo>& ranks, const std::vector<bool>& read,
                                       const LoadOptions& options = {});

// Distributed analysis reads each store where it is and builds the model elsewhere: one
// store's rows, read and packed into bytes by the process that can read it, and a run built from
// every store's bytes. The model is the one loadRun() builds from the same stores.
using PackedStore = std::vector<std::byte>;
trace::Result<PackedStore> readPackedStore(const std::filesystem::path& store);

struct StoreRows;
struct StoreFacts;
// readPackedStore for a process that reads store after store: the rows of each are read into the
// same buffers, which keep their room, instead of fresh ones faulted in for every store (at
// 1 024 stores, 1.4 GB, the root's own reads then took a quarter less time, and so did the
// model's building beside them). One read at a time.
class PackedStoreReader {
 public:
  PackedStoreReader();
  ~PackedStoreReader();
  PackedStoreReader(const PackedStoreReader&) = delete;
  PackedStoreReader& operator=(const PackedStoreReader&) = delete;

  trace::Result<PackedStore> read(const std::filesystem::path& store);
  // The store's rows, and the few of them the analysis across ranks needs (the collectives, the
  // ops that flow between streams, ...), for a distributed analysis that analyses each rank where
  // its store was read and sends only the summary on.
  struct RowsAndSummary {
    PackedStore rows, summary;
  };
  trace::Result<RowsAndSummary> readWithSummary(const std::filesystem::path& store);

 private:
  trace::Result<StoreFacts> readRows(const std::filesystem::path& store);
  std::unique_ptr<StoreRows> rows_;
};

// `next(i)` gives store i of `stores` (called once per store, in order, on this thread), or why
// it could not be had: such a store is left out, and the model's diagnostics say so, naming it
// (load_store_missing). Fails only when no store is left, or when the stores' rows do not fit
// together.
using NextPackedStore = std::function<trace::Result<PackedStore>(std::size_t i)>;
trace::Result<RunModel> loadPackedRun(const std::vector<trace::StoreFile>& stores, const NextPackedStore& next,
                                      const LoadOptions& options = {});

// Meta keys an importer sets for the window its source trace covers, on the store's clock
// (the writer's own start_ns/end_ns are when the store was written).
inline constexpr std::string_view kTraceStartMetaKey = "trace_start_ns";
inline constexpr std::string_view kTraceEndMetaKey = "trace_end_ns";

}  // namespace syncopate::analyzer

// One process's stores analysed rank by rank, in consecutive batches whose model fits the memory
// limit (docs/analyzer.md, "Memory"), for an analysis without the critical path whose run is
// combined from summaries: a single process over its limit (streamed_analysis.hpp) and each
// process of a distributed one (distributed_analysis.hpp).
//
// The first pass reads every batch and keeps each store's summary and what each rank's rows say
// of its iterations, both ways the run may be cut (whether any rank has step markers is known
// only once every rank is read). Once the run's model is built from the summaries, the second
// pass gives each rank's model, moved onto the run's time axis, to be measured. When every store
// fits in one batch, its model is kept from the first pass and the stores are read once; else
// each is read twice, and only one batch's rows are held at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "syncopate/analyzer/iterations.hpp"
#include "syncopate/analyzer/run_loader.hpp"

namespace syncopate::analyzer {

// What one rank's rows say of its iterations, on its batch's clock.
struct RankFirstPass {
  std::string store;  // its store's file name
  bool has_markers = false;
  RankIterationFacts by_markers, by_pattern;
  std::int64_t to_aligned_ns = 0;  // its batch's clock
  std::uint64_t ops = 0, api_calls = 0;
  // The facts of the run's cut, moved onto the run's axis, where the rank's clock moved by
  // `run_aligned_ns`.
  RankIterationFacts factsFor(bool any_marker, std::int64_t run_aligned_ns) const;
};

class RankBatches {
 public:
  // The first pass over `stores`, with their rows counted (countRows; a store that could not be
  // counted with none). A store that cannot be read is left out, its summary the reason; fails
  // only when a store alone needs more than `memory_limit` (0: none), or when the stores read do
  // not fit together.
  static trace::Result<RankBatches> read(const std::vector<StoreRowCount>& stores, std::uint64_t memory_limit,
                                         const IterationOptions& iterations);

  std::size_t batches() const { return batches_.size(); }
  // By store, in the order given: its summary (summaryRows, packed), or why it could not be read.
  std::vector<trace::Result<PackedStore>>& summaries() { return summaries_; }
  // The ranks read, in store order.
  const std::vector<RankFirstPass>& ranks() const { return ranks_; }
  UnmatchedEvents unmatched() const { return unmatched_; }

  // The second pass: each rank read in the first, its model moved onto the run's axis (where its
  // clock moved by `run_aligned_ns(store)`), given to `measure` with its rank row in that model.
  using Measure = std::function<trace::Status(const RunModel& model, Index rank, const RankFirstPass& first)>;
  trace::Status measure(const std::function<std::int64_t(const RankFirstPass&)>& run_aligned_ns, const Measure& measure);
  // After measure(), when the stores were read in one batch: its model, on the run's axis (every
  // rank's ops at once, as the critical path walks them); else null.
  const RunModel* measuredModel() const { return kept_ ? &*kept_ : nullptr; }

 private:
  std::vector<std::vector<trace::StoreFile>> batches_;
  std::vector<std::vector<std::size_t>> batch_ranks_;  // indices into ranks_, per batch
  std::vector<trace::Result<PackedStore>> summaries_;
  std::vector<RankFirstPass> ranks_;
  UnmatchedEvents unmatched_;
  std::optional<RunModel> kept_;  // the one batch's model, when there is one (after measure(): on the run's axis)
};

}  // namespace syncopate::analyzer

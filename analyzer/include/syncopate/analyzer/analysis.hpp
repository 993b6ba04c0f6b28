// `syncopate analyze` as a library call: every metric of a loaded run, per rank and per
// iteration, in one value that the report writers (text, JSON, results store), the tuner and
// the GUI read. docs/analyzer.md defines each field.
#pragma once

#include <cstdint>
#include <vector>

#include "syncopate/analyzer/collectives.hpp"
#include "syncopate/analyzer/critical_path.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/iterations.hpp"
#include "syncopate/analyzer/metrics.hpp"
#include "syncopate/analyzer/phase_timings.hpp"
#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

struct AnalysisOptions {
  IterationOptions iterations;
  std::int64_t kernel_wait_threshold_ns = kHtaKernelWaitThresholdNs;
  bool critical_path = true;
};

// One rank in one iteration.
struct RankIterationMetrics {
  Index rank = 0;                   // row in RunModel::ranks
  RankIteration window;
  TimeBreakdown time;
  std::int64_t collective_wait_ns = 0;  // its collectives starting in the window waited this long for others
};

struct RankSummary {
  Index rank = 0;
  std::int64_t iterations = 0;
  TimeBreakdown total;              // sums over its iterations
  TimeBreakdown mean;               // total / iterations (per-iteration figures)
  std::int64_t collective_wait_ns = 0;  // per iteration, mean
  std::vector<StreamIdle> streams;
  KernelTypeBreakdown kernel_types{};
  RankCollectiveSummary collectives;
};

struct Analysis {
  AnalysisOptions options;
  // The run's GPU ops and API calls (of which a distributed analysis's model holds only those
  // the ranks share: docs/analyzer.md, "Distributed analysis").
  std::uint64_t run_ops = 0, run_api_calls = 0;
  Iterations iterations;
  std::vector<RankIterationMetrics> rank_iterations;  // by (iteration number, rank)
  std::vector<RankSummary> ranks;                     // index: rank row
  TimeBreakdown aggregate;          // mean over ranks of RankSummary::mean
  std::int64_t aggregate_collective_wait_ns = 0;
  std::vector<KernelStat> kernels;  // every op name, longest total first
  KernelTypeBreakdown kernel_types{};  // summed over ranks
  CollectiveAnalysis collectives;
  std::vector<CriticalPath> critical_paths;  // one per iteration number

  // Rows of rank_iterations for one iteration number.
  std::vector<const RankIterationMetrics*> iteration(std::int64_t number) const;
  // Start and end of an iteration across ranks (earliest start, latest end).
  std::pair<std::int64_t, std::int64_t> iterationSpan(std::int64_t number) const;
};

// What the analysis takes from one rank's own rows: its iterations' time breakdowns, the idle
// time of its streams and its kernel-type breakdown over its iterations, and its kernel
// tallies. A distributed analysis computes it where the rank's store was read (docs/analyzer.md,
// "Distributed analysis"); everything else comes from these parts and the collectives.
struct RankPart {
  std::vector<RankIterationMetrics> rows;  // one per iteration; collective_wait_ns not yet known
  std::vector<StreamIdle> streams;
  KernelTypeBreakdown kernel_types{};
  std::vector<KernelTally> kernels;
};
RankPart analyzeRankPart(const RunModel& model, Index rank, const std::vector<RankIteration>& iterations,
                         const AnalysisOptions& options);

// The analysis from every rank's part (index: rank row) and what the model holds across ranks:
// the collectives, and, for the critical paths (when options ask for them), every op.
trace::Result<Analysis> combineRankParts(const RunModel& model, Iterations iterations, std::vector<RankPart> parts,
                                         const AnalysisOptions& options, PhaseTimings* timings = nullptr);

// Each rank's totals, means and collective wait, and the aggregate over ranks, from the rows of
// rank_iterations (a.ranks sized to the run's ranks): the part of analyze() that needs no
// model, shared with what reads stored results back (results_reader.hpp).
void summarizeRanks(Analysis& a);

// `timings`, when set, receives the analysis's phases.
trace::Result<Analysis> analyze(const RunModel& model, const AnalysisOptions& options = {}, PhaseTimings* timings = nullptr);

}  // namespace syncopate::analyzer

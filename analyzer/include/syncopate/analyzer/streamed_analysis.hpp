// A run larger than the memory one process may use, analysed whole without the critical path:
// its stores in batches that fit (docs/analyzer.md, "Memory"). The first pass reads each batch,
// keeps each store's summary and what its ranks say of their iterations; the run's model is
// built from the summaries (its ranks, streams, collectives and clocks); the second pass reads
// each batch again and measures its ranks in the run's iterations. Each store is read twice;
// only one batch's rows and the summaries are held at a time. The results are analyze()'s of
// the whole run, as a distributed analysis's are (distributed_analysis.hpp, the same parts).
#pragma once

#include <cstddef>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/run_loader.hpp"

namespace syncopate::analyzer {

struct StreamedAnalysis {
  RunModel model;      // the run's model built from the stores' summaries
  Analysis analysis;
  std::size_t batches = 0;
};

// `stores`: the run's, counted (countStoreRows, which says whether the run needs batches at
// all). `load.memory_limit` sizes the batches (0: one batch). Refuses a store that alone needs
// more than the limit, and options that ask for the critical path.
trace::Result<StreamedAnalysis> analyzeRunStreamed(const std::vector<StoreRowCount>& stores, const LoadOptions& load,
                                                   const AnalysisOptions& options);

}  // namespace syncopate::analyzer

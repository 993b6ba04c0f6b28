// The rows of one store that the analysis across ranks needs, for a distributed analysis that
// leaves each rank's other rows in the process that read them (docs/analyzer.md, "Distributed
// analysis"). A model built from every store's summary has the run's ranks, streams, threads,
// collectives and clock alignment, and the same diagnostics as a model of the whole stores
// given the counts of unmatched event waits and syncs (LoadOptions), which are each rank's own.
#pragma once

#include <cstddef>

#include "store_rows.hpp"

namespace syncopate::analyzer {

// Kept of `rows` (a store whose strings table holds `store_strings` strings):
// - every stream, thread, collective, diagnostic and tear, as read;
// - the ops the ranks share, collectives and p2p, and the API calls that issued them (they match
//   across the run as the whole rows do);
// - every row the loader would count as damaged or skip (an unknown string, stream or thread),
//   so that its diagnostics count the same;
// - of each table, the row that starts first and the row that ends last of those the model
//   takes, so that the model spans the same time.
// An op kept for its time or its damage loses its event: a rank's event waits and syncs are
// counted where the rank was read.
StoreRows summaryRows(const StoreRows& rows, std::size_t store_strings);

}  // namespace syncopate::analyzer

// Run directories written through the trace writer, the way the collector writes them, for
// tests that open real stores (and deliberately broken ones).
#pragma once

#include <filesystem>
#include <string>

namespace syncopate::gui::testing {

// Two ranks on hosts node-a / node-b, as twoRankRun() (sample_runs.hpp) describes, without the
// overlapping kernels, the memcpy and the sync; times start at 1 s on each store's clock.
// Returns an empty string, or why it failed.
std::string writeTwoRankRun(const std::filesystem::path& dir);

// A directory whose rank-0.sqlite is not a SQLite database at all.
void writeGarbageStore(const std::filesystem::path& dir);

}  // namespace syncopate::gui::testing

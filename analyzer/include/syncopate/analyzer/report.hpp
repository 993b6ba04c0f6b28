// What `syncopate analyze` prints and stores: the JSON document (`--json`, and
// DIR/analysis.json), the terminal summary, and the full results in DIR/analysis.sqlite.
// docs/analyzer.md documents every field of both files.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/trace/status.hpp"
#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

inline constexpr const char* kAnalysisJsonSchema = "syncopate.analysis/1";
inline constexpr const char* kAnalysisJsonFile = "analysis.json";
inline constexpr const char* kAnalysisStoreFile = "analysis.sqlite";
inline constexpr const char* kAnalysisStoreVersion = "1.1";

struct ReportOptions {
  std::size_t top_kernels = 10;
  std::size_t top_path_ops = 10;
  std::string run_dir;  // shown in the report
};

nlohmann::json analysisToJson(const RunModel& model, const Analysis& analysis, const ReportOptions& options = {});

// The terminal summary: the few numbers that matter first, then tables.
std::string analysisToText(const RunModel& model, const Analysis& analysis, const ReportOptions& options = {});

// Writes DIR/analysis.json and DIR/analysis.sqlite (replacing earlier results).
trace::Status writeAnalysisResults(const std::filesystem::path& run_dir, const RunModel& model, const Analysis& analysis,
                                   const nlohmann::json& document);

}  // namespace syncopate::analyzer

// A run directory analysed as `syncopate analyze DIR` does, with analysis.json and
// analysis.sqlite written into it: what the tests of readers of those results start from.
#pragma once

#include <filesystem>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/run_model.hpp"
#include "syncopate/trace/status.hpp"

namespace syncopate::analyzer::testing {

struct AnalysedModel {
  RunModel model;
  Analysis analysis;
};

// The model and analysis of `dir`, once their results are saved in it; why not, otherwise.
trace::Result<AnalysedModel> analyseIntoRunDir(const std::filesystem::path& dir);

}  // namespace syncopate::analyzer::testing

#include "analysed_run.hpp"

#include "syncopate/analyzer/report.hpp"
#include "syncopate/analyzer/run_loader.hpp"

namespace syncopate::analyzer::testing {

trace::Result<AnalysedModel> analyseIntoRunDir(const std::filesystem::path& dir) {
  auto model = loadRun(dir);
  if (!model) return model.status();
  auto analysis = analyze(*model);
  if (!analysis) return analysis.status();
  const nlohmann::json doc = analysisToJson(*model, *analysis, {.top_kernels = 10, .run_dir = dir.string()});
  if (trace::Status saved = writeAnalysisResults(dir, *model, *analysis, doc); !saved) return saved;
  return AnalysedModel{std::move(model).value(), std::move(analysis).value()};
}

}  // namespace syncopate::analyzer::testing

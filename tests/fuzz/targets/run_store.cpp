// A rank's store as `syncopate analyze --json --no-save` reads it: loaded, analysed and
// reported, the JSON text included (a damaged name once aborted the report).
#include "../fuzz_targets.hpp"
#include "../scratch.hpp"
#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/report.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/trace/json_text.hpp"

namespace syncopate::fuzz {

Verdict run_store(Input input) {
  freshScratchFile("rank-0.sqlite", input);
  auto model = analyzer::loadRun(scratchDirectory());
  if (!model) return model.message();
  auto analysis = analyzer::analyze(*model);
  if (!analysis) return analysis.message();
  analyzer::ReportOptions report;
  report.run_dir = scratchDirectory();
  const std::string json = trace::jsonText(analyzer::analysisToJson(*model, *analysis, report), 2);
  const std::string text = analyzer::analysisToText(*model, *analysis, report);
  if (json.empty() || text.empty()) return std::string("the report of an analysed store came out empty");
  return std::nullopt;
}

}  // namespace syncopate::fuzz

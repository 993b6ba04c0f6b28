// Loading a run directory goes through the analyzer's loader: the GUI reads exactly what
// `syncopate analyze` reads, and a run opened on its summary reads `analyze`'s own results.
#include <numeric>
#include <system_error>

#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/gui/model/loaded_run.hpp"
#include "syncopate/gui/model/workers.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace syncopate::gui {

namespace {

std::string labelOf(const std::filesystem::path& dir) {
  return dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
}

analyzer::LoadOptions loadOptions(const ProgressFn& progress) {
  analyzer::LoadOptions options;
  if (progress) options.progress = [&progress](std::string_view what, std::size_t done, std::size_t total) {
    progress(what, done, total);
  };
  return options;
}

// The bytes of the run's stores (0 when the directory cannot be listed: the loader says why).
std::uintmax_t storeBytes(const std::filesystem::path& dir) {
  auto stores = trace::listStores(dir);
  if (!stores.ok()) return 0;
  std::uintmax_t bytes = 0;
  for (const trace::StoreFile& f : *stores) {
    std::error_code ec;
    const std::uintmax_t n = std::filesystem::file_size(f.path, ec);
    if (!ec) bytes += n;
  }
  return bytes;
}

}  // namespace

RunSource directorySource(const std::filesystem::path& dir) {
  RunSource s;
  s.dir = dir;
  s.label = labelOf(dir);
  s.load = [dir](const ProgressFn& progress) { return analyzer::loadRun(dir, loadOptions(progress)); };
  return s;
}

RunSource summarySource(const std::filesystem::path& dir, RunSummary summary) {
  RunSource s;
  s.dir = dir;
  s.label = labelOf(dir);
  s.load = [dir, read = summary.rows_loaded, results = summary.results](const ProgressFn& progress) {
    // Every rank as the analysis found it; only the stores of the ranks to read are opened.
    std::vector<analyzer::Index> every(results->ranks.size());
    std::iota(every.begin(), every.end(), analyzer::Index{0});
    return analyzer::loadStoredRanks(dir, *results, every, read, loadOptions(progress));
  };
  s.summary = std::move(summary);
  return s;
}

trace::Result<RunSource> openDirectory(const std::filesystem::path& dir, OpenMode mode) {
  if (mode == OpenMode::Full || (mode == OpenMode::Auto && storeBytes(dir) <= kSummaryAboveBytes)) return directorySource(dir);
  auto results = analyzer::readStoredResults(dir);
  if (!results) {
    // A large run that was never analysed still opens, whole.
    if (mode == OpenMode::Auto) return directorySource(dir);
    return results.status();
  }
  RunSummary summary;
  summary.rows_loaded.assign(results->ranks.size(), false);
  summary.results = std::make_shared<const analyzer::StoredResults>(std::move(results).value());
  return summarySource(dir, std::move(summary));
}

trace::Result<std::shared_ptr<LoadedRun>> loadRunDirectory(const std::filesystem::path& dir, std::uint32_t run,
                                                           const ProgressFn& progress) {
  const RunSource source = directorySource(dir);
  auto model = source.load(progress);
  if (!model) return model.status();
  auto prepared = prepareRun(std::move(model).value(), run, source.label, progress);
  if (prepared) prepared.value()->dir = dir;
  return prepared;
}

}  // namespace syncopate::gui

// Loading a run directory goes through the analyzer's loader: the GUI reads exactly what
// `syncopate analyze` reads.
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/gui/model/loaded_run.hpp"
#include "syncopate/gui/model/workers.hpp"

namespace syncopate::gui {

RunSource directorySource(const std::filesystem::path& dir) {
  RunSource s;
  s.dir = dir;
  s.label = dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
  s.load = [dir](const ProgressFn& progress) {
    analyzer::LoadOptions options;
    if (progress) options.progress = [&progress](std::string_view what, std::size_t done, std::size_t total) {
      progress(what, done, total);
    };
    return analyzer::loadRun(dir, options);
  };
  return s;
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

// Loading a run directory goes through the analyzer's loader: the GUI reads exactly what
// `syncopate analyze` reads.
#include "syncopate/analyzer/run_loader.hpp"
#include "syncopate/gui/model/loaded_run.hpp"

namespace syncopate::gui {

analyzer::Expected<std::shared_ptr<LoadedRun>> loadRunDirectory(const std::filesystem::path& dir, std::uint32_t run,
                                                                const ProgressFn& progress) {
  analyzer::LoadOptions options;
  if (progress) {
    options.progress = [&progress](std::string_view what, std::size_t done, std::size_t total) {
      progress(what, done, total);
    };
  }
  auto model = analyzer::loadRun(dir, options);
  if (!model) return model.error();
  std::string label = dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
  auto prepared = prepareRun(std::move(model).value(), run, std::move(label), progress);
  if (prepared) prepared.value()->dir = dir;
  return prepared;
}

}  // namespace syncopate::gui

#include "support/recording.hpp"

#include <stdexcept>

#include "support/child_process.hpp"
#include "syncopate/collector/record.hpp"

namespace collector_test {

std::filesystem::path preloadLibrary() { return buildDir() / "lib" / "libsyncopate_preload.so"; }
std::filesystem::path workloadProgram() { return buildDir() / "bin" / "collector_cuda_workload"; }
std::filesystem::path testProfile(const std::string& name) {
  return sourceDir() / "tests" / "collector" / "profiles" / (name + ".json");
}

std::map<std::string, std::string> recordingEnvironment(const RecordingSetup& setup) {
  syncopate::collector::RecordOptions options;
  options.output_dir = setup.directory;
  options.backend = setup.backend;
  options.armed = setup.armed;
  options.iteration_marker = setup.iteration_marker;
  options.preload_library = preloadLibrary();
  std::vector<std::string> warnings;
  auto environment =
      syncopate::collector::recordEnvironment(options, syncopate::collector::currentEnvironment(), warnings);
  if (!warnings.empty()) throw std::runtime_error("unexpected warning: " + warnings.front());
  return {environment.begin(), environment.end()};
}

}  // namespace collector_test

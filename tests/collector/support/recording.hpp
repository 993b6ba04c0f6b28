// Running programs under the collector exactly as `syncopate record` does (the same library
// builds the environment), on simgpu.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace collector_test {

struct RecordingSetup {
  std::filesystem::path directory;
  std::string backend = "auto";
  bool armed = false;
  std::string iteration_marker = "ProfilerStep";
};

// The environment variables for a recorded job (plus the test's simgpu profile when given).
std::map<std::string, std::string> recordingEnvironment(const RecordingSetup& setup);

std::filesystem::path preloadLibrary();
std::filesystem::path workloadProgram();
// A machine profile of the collector's tests (tests/collector/profiles/<name>.json).
std::filesystem::path testProfile(const std::string& name);

}  // namespace collector_test

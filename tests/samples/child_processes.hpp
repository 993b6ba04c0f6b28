// Runs programs as child processes for end-to-end tests: several at once (the ranks of a
// torchrun-style launch), each with extra environment variables, capturing stdout and stderr,
// and killing every process group that outlives the timeout (a test never hangs).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace sample_testing {

struct ChildSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value", added to (or replacing in) the test's environment
};

struct ChildResult {
  int exit_code = -1;  // the exit status, or 128 + signal
  bool timed_out = false;
  std::string out;
  std::string err;
};

std::vector<ChildResult> runChildren(const std::vector<ChildSpec>& specs, std::chrono::seconds timeout);
ChildResult runChild(const ChildSpec& spec, std::chrono::seconds timeout);

}  // namespace sample_testing

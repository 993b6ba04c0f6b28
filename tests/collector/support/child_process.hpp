// Child processes for the collector's tests: started with extra environment variables, their
// stdout and stderr captured, waited for with a timeout after which the whole process group is
// killed (a test never hangs), or killed on purpose (SIGKILL tests).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace collector_test {

struct ChildResult {
  int exit_code = -1;  // exit status, or 128 + the signal that ended it
  bool timed_out = false;
  std::string out;
  std::string err;
};

class Child {
 public:
  // Starts argv[0] (searched on PATH) with `environment` added to (or replacing in) the test's,
  // on simgpu (its libraries first on the library path).
  Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // Waits at most `timeout`; then kills the process group.
  ChildResult wait(std::chrono::seconds timeout);
  void kill(int signal);
  // What the child printed so far.
  std::string outSoFar() const;

 private:
  pid_t pid_ = -1;
  std::filesystem::path out_file_;
  std::filesystem::path err_file_;
  bool reaped_ = false;
};

ChildResult run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment,
                std::chrono::seconds timeout);

// A fresh directory under the system's temporary directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Words of a flag string given at build time ("--oversubscribe --bind-to none ...").
std::vector<std::string> splitFlags(const std::string& flags);

// The build tree's artefacts and the source tree.
std::filesystem::path buildDir();
std::filesystem::path sourceDir();

}  // namespace collector_test

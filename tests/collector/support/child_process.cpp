#include "support/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace collector_test {
namespace {

std::string readAll(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path uniquePath(const std::string& stem) {
  static int counter = 0;
  return std::filesystem::temp_directory_path() /
         (stem + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter));
}

}  // namespace

Child::Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment)
    : out_file_(uniquePath("collector-test-out")), err_file_(uniquePath("collector-test-err")) {
  std::map<std::string, std::string> merged;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text = *entry;
    auto equals = text.find('=');
    if (equals != std::string::npos) merged[text.substr(0, equals)] = text.substr(equals + 1);
  }
  // What every child of these tests needs: simgpu first on the library path, and Open MPI
  // allowed to run as root with more ranks than cores (CI).
  merged["LD_LIBRARY_PATH"] = (buildDir() / "lib" / "simgpu").string();
  merged["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
  merged["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
  merged["OMPI_MCA_rmaps_base_oversubscribe"] = "1";
  for (const auto& [name, value] : environment) merged[name] = value;
  std::vector<std::string> entries;
  for (const auto& [name, value] : merged) entries.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> arguments = argv;
  std::vector<char*> args;
  for (auto& argument : arguments) args.push_back(argument.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);  // its own group: killable as a whole
  posix_spawnattr_setpgroup(&attributes, 0);
  int error = posix_spawnp(&pid_, args[0], &actions, &attributes, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) throw std::runtime_error("cannot start " + argv.front());
}

Child::~Child() {
  if (!reaped_) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  std::error_code ec;
  std::filesystem::remove(out_file_, ec);
  std::filesystem::remove(err_file_, ec);
}

ChildResult Child::wait(std::chrono::seconds timeout) {
  ChildResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (std::chrono::steady_clock::now() > deadline) {
      result.timed_out = true;
      ::kill(-pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  reaped_ = true;
  // What the job's group may have left running (mpirun's ranks) goes too.
  ::kill(-pid_, SIGKILL);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  result.out = readAll(out_file_);
  result.err = readAll(err_file_);
  return result;
}

void Child::kill(int signal) { ::kill(pid_, signal); }

std::string Child::outSoFar() const { return readAll(out_file_); }

ChildResult run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment,
                std::chrono::seconds timeout) {
  Child child(argv, environment);
  return child.wait(timeout);
}

TempDir::TempDir() : path_(uniquePath("collector-test-dir")) { std::filesystem::create_directories(path_); }

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> splitFlags(const std::string& flags) {
  std::istringstream words(flags);
  std::vector<std::string> split;
  for (std::string word; words >> word;) split.push_back(word);
  return split;
}

// Given at build time: ctest's ENVIRONMENT holds only the first variable of the shared test
// environment once gtest_discover_tests has split its list.
std::filesystem::path buildDir() { return COLLECTOR_TEST_BUILD_DIR; }
std::filesystem::path sourceDir() { return COLLECTOR_TEST_SOURCE_DIR; }

}  // namespace collector_test

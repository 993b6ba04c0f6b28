// Running the recorded job as a child process that the terminal's signals reach too.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "syncopate/collector/record.hpp"

extern char** environ;

namespace syncopate::collector {
namespace {

volatile sig_atomic_t childPid = 0;

void passOn(int signal) {
  if (childPid > 0) ::kill(static_cast<pid_t>(childPid), signal);
}

}  // namespace

trace::Result<int> runCommand(const std::vector<std::string>& command, const Environment& changes) {
  if (command.empty()) return trace::Status(trace::StatusCode::InvalidArgument, "no command to run");
  Environment environment = currentEnvironment();
  for (const auto& [name, value] : changes) environment[name] = value;
  std::vector<std::string> entries;
  entries.reserve(environment.size());
  for (const auto& [name, value] : environment) entries.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& entry : entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> arguments = command;
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  struct sigaction forward {};
  forward.sa_handler = passOn;
  sigemptyset(&forward.sa_mask);
  struct sigaction previous[3] {};
  const int signals[3] = {SIGINT, SIGTERM, SIGHUP};

  pid_t pid = 0;
  int spawned = ::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data());
  if (spawned != 0) {
    return trace::Status(trace::StatusCode::NotFound,
                         "cannot run " + command.front() + ": " + std::strerror(spawned));
  }
  childPid = pid;
  for (int i = 0; i < 3; ++i) ::sigaction(signals[i], &forward, &previous[i]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  childPid = 0;
  for (int i = 0; i < 3; ++i) ::sigaction(signals[i], &previous[i], nullptr);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace syncopate::collector

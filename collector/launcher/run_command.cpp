// Running the recorded job as a child process that the terminal's signals reach too.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "syncopate/collector/record.hpp"
#include "syncopate/trace/run_dir.hpp"

extern char** environ;

namespace syncopate::collector {
namespace {

volatile sig_atomic_t childPid = 0;

void passOn(int signal) {
  if (childPid > 0) ::kill(static_cast<pid_t>(childPid), signal);
}

}  // namespace

// Copies everything readable from `from` to `file` (and our stdout when `echo`) until end of file.
void relay(int from, std::FILE* file, bool echo) {
  char buffer[1 << 14];
  for (;;) {
    const ssize_t n = ::read(from, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t done = 0; echo && done < n;) {
      const ssize_t w = ::write(STDOUT_FILENO, buffer + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      done += w;
    }
    std::fwrite(buffer, 1, static_cast<std::size_t>(n), file);
    std::fflush(file);
  }
  ::close(from);
}

trace::Result<int> runCommand(const std::vector<std::string>& command, const Environment& changes,
                              const std::filesystem::path& output_copy, bool echo) {
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

  // With a copy of stdout: the job writes into a pipe that a thread relays.
  std::FILE* copy = nullptr;
  int pipe_fds[2] = {-1, -1};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!output_copy.empty()) {
    // O_NOFOLLOW: a symbolic link planted as the copy (job.log) must not make us write elsewhere.
    const int copy_fd = ::open(output_copy.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    copy = copy_fd < 0 ? nullptr : ::fdopen(copy_fd, "w");
    if (copy == nullptr) {
      const int err = errno;
      if (copy_fd >= 0) ::close(copy_fd);
      posix_spawn_file_actions_destroy(&actions);
      return trace::Status(trace::StatusCode::PermissionDenied,
                           "cannot write " + output_copy.string() + ": " + trace::openFailure(err));
    }
    if (::pipe(pipe_fds) != 0) {
      std::fclose(copy);
      posix_spawn_file_actions_destroy(&actions);
      return trace::Status(trace::StatusCode::IoError, std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  }

  pid_t pid = 0;
  int spawned = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  std::thread relayer;
  if (copy != nullptr) {
    ::close(pipe_fds[1]);
    if (spawned == 0) {
      relayer = std::thread(relay, pipe_fds[0], copy, echo);
    } else {
      ::close(pipe_fds[0]);
    }
  }
  if (spawned != 0) {
    if (copy != nullptr) std::fclose(copy);
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
  if (relayer.joinable()) {
    relayer.join();  // the pipe ends when the job and every process it started have closed it
    std::fclose(copy);
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace syncopate::collector

#include "child_processes.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace sample_testing {
namespace {

struct Running {
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  ChildResult result;
};

Running start(const ChildSpec& spec) {
  if (spec.argv.empty()) throw std::invalid_argument("runChildren: empty command");
  std::array<int, 2> out{}, err{};
  if (::pipe2(out.data(), O_CLOEXEC) != 0 || ::pipe2(err.data(), O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  }
  // Everything the child needs is prepared before fork: it only calls async-signal-safe
  // functions (plus execve) afterwards.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& extra : spec.env) replaced |= extra.substr(0, extra.find('=')) == name;
    if (!replaced) env_strings.push_back(entry);
  }
  env_strings.insert(env_strings.end(), spec.env.begin(), spec.env.end());
  std::vector<char*> envp, argv;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, so that a timeout kills mpirun and its ranks together
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
    const char message[] = "runChildren: exec failed\n";
    [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(out[1]);
  ::close(err[1]);
  return Running{pid, out[0], err[0], {}};
}

}  // namespace

std::vector<ChildResult> runChildren(const std::vector<ChildSpec>& specs, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<Running> children;
  for (const ChildSpec& spec : specs) children.push_back(start(spec));

  bool timed_out = false;
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::string*> sinks;
    for (Running& c : children) {
      if (c.out_fd >= 0) {
        fds.push_back({c.out_fd, POLLIN, 0});
        sinks.push_back(&c.result.out);
      }
      if (c.err_fd >= 0) {
        fds.push_back({c.err_fd, POLLIN, 0});
        sinks.push_back(&c.result.err);
      }
    }
    if (fds.empty()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      std::array<char, 4096> buffer{};
      const ssize_t n = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (n > 0) {
        sinks[i]->append(buffer.data(), static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      for (Running& c : children) {  // end of file (or an error): stop watching this pipe
        if (c.out_fd == fds[i].fd) c.out_fd = -1;
        if (c.err_fd == fds[i].fd) c.err_fd = -1;
      }
      ::close(fds[i].fd);
    }
  }

  std::vector<ChildResult> results;
  for (Running& c : children) {
    if (c.out_fd >= 0) ::close(c.out_fd);
    if (c.err_fd >= 0) ::close(c.err_fd);
    // A child that closed its output may still be running: it too gets until the deadline.
    int status = 0;
    for (;;) {
      if (timed_out) {
        ::kill(-c.pid, SIGKILL);
        c.result.timed_out = true;
      }
      const pid_t done = ::waitpid(c.pid, &status, timed_out ? 0 : WNOHANG);
      if (done == c.pid) break;
      if (done < 0 && errno != EINTR) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        timed_out = true;
      } else if (done == 0) {
        ::usleep(10000);
      }
    }
    c.result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    results.push_back(std::move(c.result));
  }
  return results;
}

ChildResult runChild(const ChildSpec& spec, std::chrono::seconds timeout) {
  return runChildren({spec}, timeout).front();
}

}  // namespace sample_testing

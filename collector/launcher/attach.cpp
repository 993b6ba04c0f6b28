// `syncopate attach`: one request to every live armed process of a run, then waiting for all
// of them to report that they recorded it.
#include "syncopate/collector/attach.hpp"

#include "host_name.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>

namespace syncopate::collector {

using trace::Result;
using trace::Status;
using trace::StatusCode;

namespace {

constexpr double kLeadSeconds = 1.0;  // how far ahead the first iteration is, in run time
constexpr auto kPollInterval = std::chrono::milliseconds(50);

std::int64_t realtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A process that said it exited, or stopped beating (killed), or is gone from this host.
bool alive(const ProcessStatus& status, const std::string& this_host, std::int64_t now) {
  if (status.state == "exited") return false;
  if (now - status.heartbeat_unix_ns > kStaleHeartbeatNs) return false;
  if (status.host == this_host && ::kill(static_cast<pid_t>(status.pid), 0) != 0 && errno == ESRCH) return false;
  return true;
}

std::string describe(const ProcessStatus& status) {
  std::string who = status.rank >= 0 ? "rank " + std::to_string(status.rank) : "pid " + std::to_string(status.pid);
  return who + " (" + status.host + ", pid " + std::to_string(status.pid) + ")";
}

const ProcessStatus* find(const std::vector<ProcessStatus>& statuses, const ProcessStatus& who) {
  for (const ProcessStatus& status : statuses) {
    if (status.pid == who.pid && status.host == who.host) return &status;
  }
  return nullptr;
}

std::uint64_t lastRequestId(const std::filesystem::path& control, const std::vector<ProcessStatus>& statuses) {
  std::uint64_t last = 0;
  for (const ProcessStatus& status : statuses) last = std::max(last, status.request);
  std::string error;
  if (auto text = readFile(control / kRequestFileName, error)) {
    if (auto request = parseRequest(*text, error)) last = std::max(last, request->id);
  }
  return last;
}

}  // namespace

std::int64_t chooseFirstIteration(const std::vector<ProcessStatus>& processes, double lead_seconds) {
  std::int64_t furthest = -1;
  double fastest = 0.0;
  for (const ProcessStatus& status : processes) {
    furthest = std::max(furthest, status.iteration);
    fastest = std::max(fastest, status.iterations_per_second);
  }
  auto ahead = static_cast<std::int64_t>(std::ceil(fastest * lead_seconds));
  return furthest + std::max<std::int64_t>(2, ahead + 1);
}

Result<AttachOutcome> attach(const std::filesystem::path& run_directory, const AttachOptions& options,
                             const Progress& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  if ((options.iterations > 0) == (options.seconds > 0)) {
    return Status(StatusCode::InvalidArgument, "ask for either --iterations N or --seconds S (one of them, positive)");
  }
  const std::filesystem::path control = run_directory / kControlDirectoryName;
  std::error_code ec;
  if (!std::filesystem::is_directory(control, ec)) {
    return Status(StatusCode::NotFound, run_directory.string() +
                                            " has no armed processes (no " + control.string() +
                                            "); start the job with `syncopate record --armed -o DIR -- ...`");
  }
  std::string error;
  if (!ensurePrivateDirectory(control, error)) return Status(StatusCode::PermissionDenied, error);

  std::vector<std::string> problems;
  std::vector<ProcessStatus> statuses = readStatuses(control, problems);
  for (const std::string& problem : problems) say("ignoring " + problem);
  const std::string this_host = hostName();
  std::vector<ProcessStatus> live;
  for (const ProcessStatus& status : statuses) {
    if (alive(status, this_host, realtimeNs())) live.push_back(status);
  }
  if (live.empty()) {
    return Status(StatusCode::NotFound, "no live armed process in " + run_directory.string() + " (" +
                                            std::to_string(statuses.size()) +
                                            " known, all exited or silent); is the job still running?");
  }
  for (const ProcessStatus& status : live) {
    if (status.state == "waiting" || status.state == "recording") {
      return Status(StatusCode::AlreadyExists, describe(status) + " is still serving request " +
                                                   std::to_string(status.request) + "; wait until it is done");
    }
  }

  AttachOutcome outcome;
  std::int64_t furthest = -1;
  double slowest = 0.0;
  for (const ProcessStatus& status : live) {
    furthest = std::max(furthest, status.iteration);
    if (status.iterations_per_second > 0 && (slowest == 0.0 || status.iterations_per_second < slowest)) {
      slowest = status.iterations_per_second;
    }
  }
  if (furthest < 0 && options.iterations > 0) {
    return Status(StatusCode::InvalidArgument,
                  "no process has started an iteration yet (no '" + live.front().marker +
                      "' range seen); try again once training runs, or use --seconds");
  }
  outcome.first_iteration = furthest < 0 ? -1 : chooseFirstIteration(live, kLeadSeconds);
  AttachRequest request;
  request.id = lastRequestId(control, statuses) + 1;
  request.first_iteration = outcome.first_iteration;
  request.iterations = options.iterations;
  request.seconds = options.seconds;
  outcome.request = request.id;
  if (!writePrivateFileAtomically(control / kRequestFileName, formatRequest(request), error)) {
    return Status(StatusCode::IoError, error);
  }
  say("asked " + std::to_string(live.size()) + " armed process(es) to record " +
      (options.iterations > 0 ? std::to_string(options.iterations) + " iteration(s)"
                              : std::to_string(options.seconds) + " s") +
      (outcome.first_iteration >= 0 ? " from iteration " + std::to_string(outcome.first_iteration)
                                    : std::string(" from now")));

  // Long enough for the slowest process to get there and through; generous, since a run may
  // slow down while recording.
  double iteration_seconds = slowest > 0 ? 1.0 / slowest : 10.0;
  double expected = options.seconds > 0 ? options.seconds : 0.0;
  if (outcome.first_iteration >= 0) {
    expected += static_cast<double>(outcome.first_iteration - furthest + options.iterations) * iteration_seconds;
  }
  const double timeout = options.timeout_seconds > 0 ? options.timeout_seconds : 2.0 * expected + 30.0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);

  std::string last_line;
  for (;;) {
    std::this_thread::sleep_for(kPollInterval);
    problems.clear();
    std::vector<ProcessStatus> now = readStatuses(control, problems);
    int done = 0;
    std::vector<std::string> failures;
    std::int64_t least = -1;
    for (const ProcessStatus& target : live) {
      const ProcessStatus* status = find(now, target);
      if (status == nullptr || !alive(*status, this_host, realtimeNs())) {
        failures.push_back(describe(target) + " went away before it was done");
        continue;
      }
      if (status->request != request.id) {
        least = least < 0 ? status->iteration : std::min(least, status->iteration);
        continue;
      }
      if (status->state == "done") {
        ++done;
      } else if (status->state == "missed") {
        failures.push_back(describe(*status) + " was already past iteration " +
                           std::to_string(request.first_iteration) + " when the request reached it");
      } else if (status->state == "error") {
        failures.push_back(describe(*status) + ": " + status->message);
      } else {
        least = least < 0 ? status->iteration : std::min(least, status->iteration);
      }
    }
    if (!failures.empty()) {
      std::string message = "attach failed: " + failures.front();
      for (std::size_t i = 1; i < failures.size(); ++i) message += "; " + failures[i];
      return Status(StatusCode::Internal, message);
    }
    if (done == static_cast<int>(live.size())) {
      for (const ProcessStatus& target : live) outcome.processes.push_back(*find(now, target));
      return outcome;
    }
    std::string line = std::to_string(done) + "/" + std::to_string(live.size()) + " done";
    if (least >= 0) line += ", slowest at iteration " + std::to_string(least);
    if (line != last_line) {
      say(line);
      last_line = line;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status(StatusCode::Internal, "gave up after " + std::to_string(static_cast<int>(timeout)) + " s: " + line +
                                              " (is the job stuck? --timeout sets a longer wait)");
    }
  }
}

}  // namespace syncopate::collector

#include "attach/control_channel.hpp"

#include <sys/stat.h>

#include "common/clock.hpp"
#include "syncopate/dispatch/log.hpp"
#include "recorder/recorder.hpp"
#include "syncopate/collector/control_files.hpp"

namespace syncopate::preload {
namespace {

const char* stateText(WindowState state) noexcept {
  switch (state) {
    case WindowState::Idle: return "armed";
    case WindowState::Waiting: return "waiting";
    case WindowState::Recording: return "recording";
    case WindowState::Done: return "done";
    case WindowState::Missed: return "missed";
  }
  return "armed";
}

}  // namespace

std::unique_ptr<ControlChannel> ControlChannel::open(Recorder& recorder, IterationWindow& window) noexcept {
  try {
    std::filesystem::path directory = std::filesystem::path(recorder.config().output_dir) / collector::kControlDirectoryName;
    std::string error;
    std::error_code ec;
    std::filesystem::create_directories(recorder.config().output_dir, ec);
    if (!collector::ensurePrivateDirectory(directory, error)) {
      log(LogLevel::Error, "armed, but the control channel is unusable: %s; `syncopate attach` cannot reach this process",
          error.c_str());
      return nullptr;
    }
    std::unique_ptr<ControlChannel> channel(new ControlChannel(recorder, window, std::move(directory)));
    channel->publish("armed", monotonicNs(), true);
    return channel;
  } catch (...) {
    log(LogLevel::Error, "armed, but the control channel could not be set up (out of memory)");
    return nullptr;
  }
}

ControlChannel::ControlChannel(Recorder& recorder, IterationWindow& window, std::filesystem::path directory)
    : recorder_(recorder),
      window_(window),
      directory_(std::move(directory)),
      status_file_(directory_ / collector::statusFileName(recorder.identity().host, recorder.identity().pid)) {}

void ControlChannel::readRequest(std::int64_t now_ns) {
  std::filesystem::path file = directory_ / collector::kRequestFileName;
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) return;
  std::int64_t mtime = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  if (mtime == request_mtime_ns_ && info.st_ino == request_inode_) return;
  request_mtime_ns_ = mtime;
  request_inode_ = info.st_ino;
  std::string error;
  if (!collector::isPrivateFile(file, error)) {
    setError("ignored a request: " + error);
    return;
  }
  auto text = collector::readFile(file, error);
  auto request = text ? collector::parseRequest(*text, error) : std::nullopt;
  if (!request) {
    setError("ignored a request: " + error);
    return;
  }
  if (request->id <= handled_request_) return;
  handled_request_ = request->id;
  error_.clear();
  window_.plan(request->id, request->first_iteration, request->iterations, request->seconds, now_ns, recorder_);
  log(LogLevel::Info, "attach request %llu: %s", static_cast<unsigned long long>(request->id), text->c_str());
}

void ControlChannel::poll(std::int64_t now_ns, bool settled) noexcept {
  try {
    readRequest(now_ns);
    window_.tick(now_ns, recorder_);
    WindowState window_state = window_.state();
    if (window_state == WindowState::Done && !settled) window_state = WindowState::Recording;
    const char* state = error_.empty() ? stateText(window_state) : "error";
    publish(state, now_ns, false);
  } catch (...) {
    // Out of memory while serving the channel: try again next time.
  }
}

void ControlChannel::setError(std::string message) noexcept {
  error_ = std::move(message);
  log(LogLevel::Error, "%s", error_.c_str());
}

void ControlChannel::publish(const char* state, std::int64_t now_ns, bool force) noexcept {
  try {
    collector::ProcessStatus status;
    status.pid = recorder_.identity().pid;
    status.host = recorder_.identity().host;
    status.rank = recorder_.rank();
    status.state = state;
    status.request = window_.request();
    status.iteration = window_.currentIteration();
    status.iterations_per_second = window_.iterationsPerSecond();
    status.recorded_iterations = window_.recordedIterations();
    status.marker = window_.marker();
    status.message = error_;
    // The heartbeat changes every time: compare without it.
    std::string content = collector::formatStatus(status);
    if (!force && content == last_published_ && now_ns - last_publish_ns_ < collector::kHeartbeatNs) return;
    last_published_ = content;
    last_publish_ns_ = now_ns;
    status.heartbeat_unix_ns = realtimeNs();
    std::string error;
    if (!collector::writePrivateFileAtomically(status_file_, collector::formatStatus(status), error)) {
      log(LogLevel::Warn, "cannot publish the armed status: %s", error.c_str());
    }
  } catch (...) {
  }
}

void ControlChannel::close() noexcept { publish("exited", monotonicNs(), true); }

}  // namespace syncopate::preload

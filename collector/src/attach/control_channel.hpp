// The process side of the arm/attach control channel (file formats and permissions:
// syncopate/collector/control_files.hpp). Served by the background thread of an armed process:
// it picks up new requests, turns them into an iteration plan, advances seconds plans, and
// publishes the process's status at every change and heartbeat.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "attach/iteration_window.hpp"

namespace syncopate::preload {

class Recorder;

class ControlChannel {
 public:
  // Null (and a logged reason) when the control directory is not usable.
  static std::unique_ptr<ControlChannel> open(Recorder& recorder, IterationWindow& window) noexcept;

  // `settled`: what the plan recorded is committed (a finished plan is reported as still
  // recording until then).
  void poll(std::int64_t now_ns, bool settled) noexcept;
  // A problem to report in the status (e.g. the store could not be created).
  void setError(std::string message) noexcept;
  // Final status: the process is going away.
  void close() noexcept;

 private:
  ControlChannel(Recorder& recorder, IterationWindow& window, std::filesystem::path directory);
  void readRequest(std::int64_t now_ns);
  void publish(const char* state, std::int64_t now_ns, bool force) noexcept;

  Recorder& recorder_;
  IterationWindow& window_;
  std::filesystem::path directory_;
  std::filesystem::path status_file_;
  std::int64_t request_mtime_ns_ = -1;
  std::uint64_t request_inode_ = 0;
  std::uint64_t handled_request_ = 0;
  std::int64_t last_publish_ns_ = 0;
  std::string last_published_;
  std::string error_;
};

}  // namespace syncopate::preload

// Turns a hang into an error: if the training loop does not report progress within the
// timeout (a rank died, a collective never completes), the watchdog's thread calls
// `on_expired` with what the loop was last waiting for. Progress is reported once per
// iteration, so the lock here is far from any hot path.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace sample_common {

class Watchdog {
 public:
  Watchdog(std::chrono::milliseconds timeout, std::function<void(const std::string& waiting_for)> on_expired);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog();

  // Restarts the timeout; `waiting_for` describes what the loop does next.
  void progress(std::string waiting_for);

 private:
  void watch();

  std::chrono::milliseconds timeout_;
  std::function<void(const std::string&)> on_expired_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::chrono::steady_clock::time_point deadline_;
  std::string waiting_for_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sample_common

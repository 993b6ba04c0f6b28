#include "sample_common/watchdog.hpp"

namespace sample_common {

Watchdog::Watchdog(std::chrono::milliseconds timeout, std::function<void(const std::string&)> on_expired)
    : timeout_(timeout),
      on_expired_(std::move(on_expired)),
      deadline_(std::chrono::steady_clock::now() + timeout),
      waiting_for_("start-up"),
      thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void Watchdog::progress(std::string waiting_for) {
  std::lock_guard lock(mutex_);
  deadline_ = std::chrono::steady_clock::now() + timeout_;
  waiting_for_ = std::move(waiting_for);
}

void Watchdog::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const auto deadline = deadline_;
    if (changed_.wait_until(lock, deadline, [&] { return stopping_ || deadline_ != deadline; })) continue;
    // Expired: report once, then wait to be stopped (on_expired normally ends the process).
    const std::string waiting_for = waiting_for_;
    lock.unlock();
    on_expired_(waiting_for);
    lock.lock();
    changed_.wait(lock, [&] { return stopping_; });
  }
}

}  // namespace sample_common

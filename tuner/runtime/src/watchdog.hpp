// The runtime's watchdog: a thread that turns a hang into a clear error. Two waits can hang a
// rank whose peer died or whose schedule diverged: an agreement between ranks that never
// completes, and a unit (a collective the plan issued) that never finishes. Each is watched
// against one limit (SYNCOPATE_WATCHDOG_S, default 300 s); past it, the runtime is told which
// wait stalled and for how long, and stops the rank. A unit counts as stalled only while the
// device shows no progress either: a host that issues far ahead of its GPU (several iterations,
// as a program that checks its results only at the end does) has units pending for longer
// than the limit while its synchronisations keep returning.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace syncopate::preload {

// The limit, from SYNCOPATE_WATCHDOG_S (a bad value is said once and the default used).
std::int64_t watchdogLimitNs() noexcept;

class Watchdog {
 public:
  enum class Stall : std::uint8_t { Agreement, Unit };

  // `unit_pending(slot)`: whether the unit whose done event is `slot` has not completed.
  // `on_stall(what, waited_ns)`: called on the watchdog's thread; it ends the process.
  void start(std::int64_t limit_ns, std::function<bool(std::uint32_t)> unit_pending,
             std::function<void(Stall, std::int64_t)> on_stall);
  // Stops the thread (at exit).
  void stop() noexcept;

  // The scheduler's thread, as it goes (a clock read and two stores; no lock).
  void unitIssued(std::uint32_t done_slot) noexcept;
  // A host synchronisation returned (or a query found work done): the device moves.
  void deviceProgressed() noexcept;
  void agreementStarted(std::int64_t now_ns) noexcept { agreement_since_ns_.store(now_ns, std::memory_order_release); }
  void agreementEnded() noexcept { agreement_since_ns_.store(0, std::memory_order_release); }

 private:
  void loop() noexcept;

  std::int64_t limit_ns_ = 0;
  std::function<bool(std::uint32_t)> unit_pending_;
  std::function<void(Stall, std::int64_t)> on_stall_;
  std::atomic<std::int64_t> last_unit_ns_{0};
  std::atomic<std::uint32_t> last_unit_slot_{0};
  std::atomic<std::int64_t> last_progress_ns_{0};
  std::atomic<std::int64_t> agreement_since_ns_{0};
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<bool> exiting_{false};
};

}  // namespace syncopate::preload

#include "watchdog.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "own_calls.hpp"
#include "syncopate/dispatch/log.hpp"

namespace syncopate::preload {
namespace {

constexpr std::int64_t kDefaultWatchdogSeconds = 300;

}  // namespace

std::int64_t watchdogLimitNs() noexcept {
  const char* text = std::getenv("SYNCOPATE_WATCHDOG_S");
  if (text == nullptr || *text == '\0') return kDefaultWatchdogSeconds * 1'000'000'000;
  std::int64_t value = 0;
  const char* end = text + std::strlen(text);
  auto [ptr, error] = std::from_chars(text, end, value);
  if (error != std::errc{} || ptr != end || value <= 0) {
    log(LogLevel::Warn, "runtime: SYNCOPATE_WATCHDOG_S=%s is not a positive number of seconds; using %lld", text,
        static_cast<long long>(kDefaultWatchdogSeconds));
    value = kDefaultWatchdogSeconds;
  }
  return value * 1'000'000'000;
}

void Watchdog::start(std::int64_t limit_ns, std::function<bool(std::uint32_t)> unit_pending,
                     std::function<void(Stall, std::int64_t)> on_stall) {
  limit_ns_ = limit_ns;
  unit_pending_ = std::move(unit_pending);
  on_stall_ = std::move(on_stall);
  thread_ = std::thread([this] { loop(); });
}

void Watchdog::stop() noexcept {
  exiting_.store(true, std::memory_order_release);
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::unitIssued(std::uint32_t done_slot) noexcept {
  last_unit_slot_.store(done_slot, std::memory_order_relaxed);
  last_unit_ns_.store(monotonicNowNs(), std::memory_order_release);
}

void Watchdog::deviceProgressed() noexcept { last_progress_ns_.store(monotonicNowNs(), std::memory_order_release); }

void Watchdog::loop() noexcept {
  std::unique_lock lock(mutex_);
  while (!exiting_.load(std::memory_order_acquire)) {
    wake_.wait_for(lock, std::chrono::milliseconds(250));
    if (exiting_.load(std::memory_order_acquire)) break;
    const std::int64_t now = monotonicNowNs();
    const std::int64_t since = agreement_since_ns_.load(std::memory_order_acquire);
    if (since != 0 && now - since > limit_ns_) on_stall_(Stall::Agreement, now - since);
    const std::int64_t issued = last_unit_ns_.load(std::memory_order_acquire);
    const std::int64_t quiet_since = std::max(issued, last_progress_ns_.load(std::memory_order_acquire));
    if (issued != 0 && now - quiet_since > limit_ns_ && unit_pending_(last_unit_slot_.load(std::memory_order_relaxed))) {
      on_stall_(Stall::Unit, now - quiet_since);
    }
  }
}

}  // namespace syncopate::preload

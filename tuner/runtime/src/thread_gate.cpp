#include "thread_gate.hpp"

#include <algorithm>
#include <ctime>

namespace syncopate::preload {
namespace {

// This thread's role: 0 not known yet, 1 the owner, 2 another thread.
thread_local int t_role = 0;

void pauseFor(long ns) noexcept {
  timespec ts{0, ns};
  nanosleep(&ts, nullptr);
}

}  // namespace

bool ThreadGate::callerOwns() noexcept {
  if (t_role == 0) {
    std::uint64_t expected = 0;
    const auto me = reinterpret_cast<std::uint64_t>(&t_role);
    t_role = owner_.compare_exchange_strong(expected, me) || expected == me ? 1 : 2;
  }
  return t_role == 1;
}

void ThreadGate::foreignCall(trace::FunctionRef<void()> stop_plan) noexcept {
  if (foreign_stopped_.load(std::memory_order_acquire)) return;
  if (!foreign_.exchange(true, std::memory_order_seq_cst)) {
    // The owner may be inside a call; it does not enter again once it sees foreign_.
    for (long pause = 1'000; owner_busy_.load(std::memory_order_seq_cst); pause = std::min(pause * 2, 1'000'000L)) {
      pauseFor(pause);
    }
    stop_plan();
    foreign_stopped_.store(true, std::memory_order_release);
    return;
  }
  waitStopped();
}

bool ThreadGate::enter() noexcept {
  owner_busy_.store(true, std::memory_order_seq_cst);
  if (!foreign_.load(std::memory_order_seq_cst)) [[likely]] return true;
  owner_busy_.store(false, std::memory_order_release);
  waitStopped();
  return false;
}

void ThreadGate::waitStopped() noexcept {
  for (long pause = 1'000; !foreign_stopped_.load(std::memory_order_acquire); pause = std::min(pause * 2, 1'000'000L)) {
    pauseFor(pause);
  }
}

}  // namespace syncopate::preload

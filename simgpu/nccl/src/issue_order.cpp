#include "issue_order.hpp"

#include <chrono>

namespace simgpu::nccl {

std::uint64_t IssueOrder::take() {
  std::lock_guard lock(mu_);
  return next_++;
}

Status IssueOrder::waitTurn(std::uint64_t ticket, std::int64_t timeout_ns, const std::function<Status()>& stop) {
  return waitUntil(ticket, timeout_ns, stop);
}

void IssueOrder::done(std::uint64_t ticket) {
  {
    std::lock_guard lock(mu_);
    turn_ = ticket + 1;
    while (cancelled_.erase(turn_) != 0) ++turn_;
  }
  cv_.notify_all();
}

void IssueOrder::cancel(std::uint64_t ticket) {
  {
    std::lock_guard lock(mu_);
    if (ticket != turn_) {
      cancelled_.insert(ticket);
      return;
    }
  }
  done(ticket);
}

Status IssueOrder::drain(std::int64_t timeout_ns, const std::function<Status()>& stop) {
  std::uint64_t last;
  {
    std::lock_guard lock(mu_);
    last = next_;
  }
  return waitUntil(last, timeout_ns, stop);
}

void IssueOrder::wakeAll() { cv_.notify_all(); }

Status IssueOrder::waitUntil(std::uint64_t turn, std::int64_t timeout_ns, const std::function<Status()>& stop) {
  std::unique_lock lock(mu_);
  auto last_change = std::chrono::steady_clock::now();
  std::uint64_t seen = turn_;
  while (turn_ < turn) {
    lock.unlock();
    Status st = stop();
    lock.lock();
    if (!st.ok()) return st;
    if (turn_ != seen) {
      seen = turn_;
      last_change = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - last_change > std::chrono::nanoseconds(timeout_ns)) {
      return Status::error(ncclRemoteError,
                           "an earlier NCCL operation on this communicator (issued on another stream) never ran: "
                           "its stream may be waiting for this one");
    }
    cv_.wait_for(lock, std::chrono::milliseconds(100));
  }
  return Status::success();
}

}  // namespace simgpu::nccl

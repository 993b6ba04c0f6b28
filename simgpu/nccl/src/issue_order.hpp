// The operations of one communicator rank run in the order they were issued, even when they
// were issued on different streams, as NCCL serialises a communicator's kernels: each launch
// takes a ticket (under the launch lock, together with its enqueue), and its body waits for
// its turn before it touches the communicator's shared state.
#pragma once

#include "simgpu/nccl/status.hpp"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>

namespace simgpu::nccl {

class IssueOrder {
 public:
  std::uint64_t take();
  // Waits until every earlier ticket is done. `stop` (polled every 100 ms) returns a failure
  // to give up with; no turn change for timeout_ns is a failure too.
  Status waitTurn(std::uint64_t ticket, std::int64_t timeout_ns, const std::function<Status()>& stop);
  void done(std::uint64_t ticket);
  // A ticket whose operation will never run (its enqueue failed, or it gave up waiting):
  // its turn is skipped when it comes.
  void cancel(std::uint64_t ticket);
  // Waits until every ticket taken so far is done (ncclCommFinalize).
  Status drain(std::int64_t timeout_ns, const std::function<Status()>& stop);
  void wakeAll();  // after an abort, so that waiters look at `stop` at once

 private:
  Status waitUntil(std::uint64_t turn, std::int64_t timeout_ns, const std::function<Status()>& stop);

  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t next_ = 0;
  std::uint64_t turn_ = 0;
  std::set<std::uint64_t> cancelled_;
};

}  // namespace simgpu::nccl

// Runs the tasks of one group to completion on the calling thread (a stream's worker),
// sleeping on the ranks' doorbells while nothing can move. Never hangs: a communicator
// abort, a peer that exits, or no progress for the endpoints' timeout ends it with an
// error, and the failure is then published to every rank of every communicator involved.
#pragma once

#include "simgpu/nccl/status.hpp"
#include "simgpu/nccl/task.hpp"

#include <cstdint>
#include <functional>
#include <span>

namespace simgpu::nccl {

// `cancelled`, when given, is polled while the tasks wait: it returns a failure to give up
// with (the process is exiting, the device is being reset). `blocked`, when given, is called
// (with the time) each time the tasks have waited past a short spin, before sleeping.
Status runTasks(std::span<Task* const> tasks, const std::function<Status()>& cancelled = {},
                const std::function<void(std::int64_t)>& blocked = {});

// The modelled execution of a group: it starts when the last rank of any of its transfers
// arrives; collectives run one after the other, point-to-point lanes alongside each other.
struct GroupTiming {
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
};
GroupTiming combineTimings(std::span<const TaskTiming> timings);

}  // namespace simgpu::nccl

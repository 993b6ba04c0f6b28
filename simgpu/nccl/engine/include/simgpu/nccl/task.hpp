// A transfer of one rank, advanced without blocking: step() does whatever the shared state
// lets it do now and says whether it moved. The runner (task_runner.hpp) steps all tasks of
// a group together, so that sends and receives in one group never wait on each other in a
// cycle, whatever order each rank issued them in.
#pragma once

#include "simgpu/nccl/endpoint.hpp"
#include "simgpu/nccl/status.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace simgpu::nccl {

enum class Progress : std::uint8_t { Blocked, Advanced, Done };

// The modelled execution of a finished task.
struct TaskTiming {
  std::int64_t start_ns = 0;     // when the last rank involved arrived
  std::int64_t duration_ns = 0;  // from the cost model
  // Tasks on the same lane run one after the other; lanes >= 0 (point-to-point, one lane
  // per peer and direction) run alongside each other; lane -1 (collectives) is serial.
  int lane = -1;
};

class Task {
 public:
  virtual ~Task() = default;
  virtual Status step(Progress* progress) = 0;
  virtual Endpoint& endpoint() const = 0;
  // The ranks whose action a blocked task waits for (for liveness checks and messages).
  virtual void awaitedRanks(std::vector<int>* ranks) const = 0;
  virtual std::string describe() const = 0;  // "AllReduce(count=1024, float32, sum)"
  virtual void appendTiming(std::vector<TaskTiming>* timings) const = 0;  // once done
  // While blocked: no earlier than what the task's start (in model time) is known to be from
  // what the ranks it waits for have published, asking them (at `now_ns`) to keep publishing.
  // 0 when the task learns nothing of its start before it is done.
  virtual std::int64_t startFloor(std::int64_t /*now_ns*/) { return 0; }
};

// Tasks that must run in order (the collectives of one communicator, the messages of one
// pair of ranks) as one task.
class TaskSequence final : public Task {
 public:
  explicit TaskSequence(std::vector<std::unique_ptr<Task>> tasks);
  Status step(Progress* progress) override;
  Endpoint& endpoint() const override { return tasks_.front()->endpoint(); }
  void awaitedRanks(std::vector<int>* ranks) const override;
  std::string describe() const override;
  void appendTiming(std::vector<TaskTiming>* timings) const override;
  std::int64_t startFloor(std::int64_t now_ns) override;  // the latest of its started tasks'

 private:
  std::vector<std::unique_ptr<Task>> tasks_;
  std::size_t current_ = 0;
};

}  // namespace simgpu::nccl

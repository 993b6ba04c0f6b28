// The transfers of one NCCL group (or of a single call) on one rank, arranged so that what
// must be ordered is ordered and everything else progresses together:
//   - the collectives of a communicator run in call order (they share its staging steps);
//   - the messages from this rank to one peer, and from one peer to this rank, run in call
//     order (the k-th send matches the k-th receive);
//   - all of these sequences advance side by side, so sends and receives in one group
//     never deadlock whatever order each rank issued them in.
#pragma once

#include "simgpu/nccl/arrival_task.hpp"
#include "simgpu/nccl/collective_task.hpp"
#include "simgpu/nccl/p2p_task.hpp"
#include "simgpu/nccl/task_runner.hpp"

#include <memory>
#include <vector>

namespace simgpu::nccl {

class TaskGroup {
 public:
  // `cost` must outlive the group.
  void addCollective(Endpoint& endpoint, const CollectiveArgs& args, const CostParams& cost);
  void addP2p(Endpoint& endpoint, const P2pArgs& args, const CostParams& cost);
  // Only the collective's arrival, exchanged in the communicator's collective order (an
  // ArrivalTask): run() then times the collective without moving its data.
  void addArrival(Endpoint& endpoint, const CollectiveArgs& args, const CostParams& cost);
  bool empty() const { return lanes_.empty(); }

  Status run(const std::function<Status()>& cancelled = {},
             const std::function<void(std::int64_t)>& blocked = {});  // see runTasks
  // While run() waits (from `blocked`): what the group's start is known to be (Task::startFloor).
  std::int64_t startFloor(std::int64_t now_ns);
  // The modelled execution of the group, once run() succeeded.
  GroupTiming timing() const;

 private:
  struct Lane {
    Endpoint* endpoint;
    int kind;  // -1: collectives; 2 * peer: sends to peer; 2 * peer + 1: receives from peer
    std::vector<std::unique_ptr<Task>> tasks;
  };
  Lane& lane(Endpoint& endpoint, int kind);

  std::vector<Lane> lanes_;
  std::vector<std::unique_ptr<TaskSequence>> sequences_;
};

}  // namespace simgpu::nccl

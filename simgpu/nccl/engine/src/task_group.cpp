#include "simgpu/nccl/task_group.hpp"

#include <algorithm>

namespace simgpu::nccl {

TaskGroup::Lane& TaskGroup::lane(Endpoint& endpoint, int kind) {
  auto it = std::find_if(lanes_.begin(), lanes_.end(),
                         [&](const Lane& l) { return l.endpoint == &endpoint && l.kind == kind; });
  if (it != lanes_.end()) return *it;
  lanes_.push_back(Lane{&endpoint, kind, {}});
  return lanes_.back();
}

void TaskGroup::addCollective(Endpoint& endpoint, const CollectiveArgs& args, const CostParams& cost) {
  lane(endpoint, -1).tasks.push_back(std::make_unique<CollectiveTask>(endpoint, args, cost));
}

void TaskGroup::addArrival(Endpoint& endpoint, const CollectiveArgs& args, const CostParams& cost) {
  lane(endpoint, -1).tasks.push_back(std::make_unique<ArrivalTask>(endpoint, args, cost));
}

void TaskGroup::addP2p(Endpoint& endpoint, const P2pArgs& args, const CostParams& cost) {
  lane(endpoint, 2 * args.peer + (args.is_send ? 0 : 1)).tasks.push_back(std::make_unique<P2pTask>(endpoint, args, cost));
}

Status TaskGroup::run(const std::function<Status()>& cancelled, const std::function<void(std::int64_t)>& blocked) {
  std::vector<Task*> tasks;
  for (Lane& l : lanes_) {
    sequences_.push_back(std::make_unique<TaskSequence>(std::move(l.tasks)));
    tasks.push_back(sequences_.back().get());
  }
  return runTasks(tasks, cancelled, blocked);
}

std::int64_t TaskGroup::startFloor(std::int64_t now_ns) {
  std::int64_t floor = 0;
  for (const auto& sequence : sequences_) floor = std::max(floor, sequence->startFloor(now_ns));
  return floor;
}

GroupTiming TaskGroup::timing() const {
  std::vector<TaskTiming> all, one;
  for (std::size_t i = 0; i < sequences_.size(); ++i) {
    one.clear();
    sequences_[i]->appendTiming(&one);
    // Each point-to-point sequence is a lane of its own (its messages share one link).
    for (TaskTiming& t : one) {
      if (t.lane >= 0) t.lane = static_cast<int>(i);
      all.push_back(t);
    }
  }
  return combineTimings(all);
}

}  // namespace simgpu::nccl

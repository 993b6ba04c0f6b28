#include "simgpu/nccl/task.hpp"

#include <algorithm>

namespace simgpu::nccl {

TaskSequence::TaskSequence(std::vector<std::unique_ptr<Task>> tasks) : tasks_(std::move(tasks)) {}

Status TaskSequence::step(Progress* progress) {
  bool advanced = false;
  while (current_ < tasks_.size()) {
    Progress p = Progress::Blocked;
    if (Status st = tasks_[current_]->step(&p); !st.ok()) return st;
    if (p == Progress::Blocked) break;
    advanced = true;
    if (p != Progress::Done) break;
    ++current_;
  }
  *progress = current_ == tasks_.size() ? Progress::Done : advanced ? Progress::Advanced : Progress::Blocked;
  return Status::success();
}

void TaskSequence::awaitedRanks(std::vector<int>* ranks) const {
  if (current_ < tasks_.size()) tasks_[current_]->awaitedRanks(ranks);
}

std::string TaskSequence::describe() const {
  return tasks_[current_ < tasks_.size() ? current_ : tasks_.size() - 1]->describe();
}

void TaskSequence::appendTiming(std::vector<TaskTiming>* timings) const {
  for (const auto& task : tasks_) task->appendTiming(timings);
}

std::int64_t TaskSequence::startFloor(std::int64_t now_ns) {
  std::int64_t floor = 0;
  for (std::size_t i = 0; i < tasks_.size() && i <= current_; ++i) floor = std::max(floor, tasks_[i]->startFloor(now_ns));
  return floor;
}

}  // namespace simgpu::nccl

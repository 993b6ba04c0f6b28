#include "simgpu/nccl/arrival_task.hpp"

#include "simgpu/nccl/datatype.hpp"

#include <algorithm>

namespace simgpu::nccl {

ArrivalTask::ArrivalTask(Endpoint& endpoint, const CollectiveArgs& args, const CostParams& cost)
    : endpoint_(endpoint), args_(args), cost_(cost) {}

void ArrivalTask::lagging(std::atomic<std::uint64_t> RankRecord::*counter, std::uint64_t at_least,
                          std::vector<int>* ranks) const {
  for (int r = 0; r < endpoint_.nranks(); ++r) {
    if ((endpoint_.record(r).*counter).load(std::memory_order_acquire) < at_least) ranks->push_back(r);
  }
}

Status ArrivalTask::step(Progress* progress) {
  *progress = Progress::Blocked;
  RankRecord& self = endpoint_.record(endpoint_.rank());
  std::vector<int> waiting;
  if (phase_ == Phase::Posting) {
    // The arrival slot is reused every round: post only once every rank has read the last one.
    round_ = self.arrival_posted.load(std::memory_order_relaxed);
    lagging(&RankRecord::arrival_consumed, round_, &waiting);
    if (!waiting.empty()) return Status::success();
    self.arrival_ns = args_.arrival_ns;
    self.arrival_posted.store(round_ + 1, std::memory_order_release);
    endpoint_.ringAllPeers();
    phase_ = Phase::Reading;
    *progress = Progress::Advanced;
  }
  if (phase_ == Phase::Reading) {
    lagging(&RankRecord::arrival_posted, round_ + 1, &waiting);
    if (!waiting.empty()) return Status::success();
    latest_ns_ = args_.arrival_ns;
    for (int r = 0; r < endpoint_.nranks(); ++r) latest_ns_ = std::max(latest_ns_, endpoint_.record(r).arrival_ns);
    self.arrival_consumed.store(round_ + 1, std::memory_order_release);
    endpoint_.ringAllPeers();
    phase_ = Phase::Done;
    *progress = Progress::Done;
  }
  return Status::success();
}

void ArrivalTask::awaitedRanks(std::vector<int>* ranks) const {
  if (phase_ == Phase::Posting) lagging(&RankRecord::arrival_consumed, round_, ranks);
  else if (phase_ == Phase::Reading) lagging(&RankRecord::arrival_posted, round_ + 1, ranks);
}

std::string ArrivalTask::describe() const {
  return "the start of " + describeCall(collDescOf(args_)) + " on " + endpoint_.label();
}

std::int64_t ArrivalTask::startFloor(std::int64_t now_ns) {
  if (phase_ == Phase::Done) return latest_ns_;
  std::int64_t floor = args_.arrival_ns;
  for (int r = 0; r < endpoint_.nranks(); ++r) {
    if (r == endpoint_.rank()) continue;
    RankRecord& peer = endpoint_.record(r);
    // The floor first: if the arrival is not posted after it was read, the floor was published
    // before that arrival and so bounds it. A peer posts round k+2 only after this rank read
    // round k+1, so a posted arrival_ns is this round's.
    const std::int64_t published = peer.arrival_floor_ns.load(std::memory_order_acquire);
    if (peer.arrival_posted.load(std::memory_order_acquire) >= round_ + 1) {
      floor = std::max(floor, peer.arrival_ns);
    } else {
      peer.floor_asked_ns.store(now_ns, std::memory_order_relaxed);
      floor = std::max(floor, published);
    }
  }
  return floor;
}

void ArrivalTask::appendTiming(std::vector<TaskTiming>* timings) const {
  const std::size_t bytes = collectiveBytes(args_.kind, args_.count, datatypeSize(args_.datatype), endpoint_.nranks());
  timings->push_back(TaskTiming{latest_ns_, collectiveDurationNs(cost_, args_.kind, bytes, endpoint_.places(), args_.channels), -1});
}

}  // namespace simgpu::nccl

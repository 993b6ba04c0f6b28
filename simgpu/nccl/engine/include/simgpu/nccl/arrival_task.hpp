// One rank's arrival at a collective, exchanged with every rank of the communicator before
// any of the collective's data moves. The last rank's arrival is where the collective starts
// (in model time) and its duration follows from the cost model, so the collective is timed
// ahead of its data, which a CollectiveTask then moves (simgpu's NCCL layer runs the two on
// different threads of the stream). In rounds through each rank's record, as the bootstrap's
// all-gather: a rank posts round k+1 once every rank has read round k.
#pragma once

#include "simgpu/nccl/collective_task.hpp"
#include "simgpu/nccl/cost_model.hpp"
#include "simgpu/nccl/task.hpp"

#include <cstdint>

namespace simgpu::nccl {

class ArrivalTask final : public Task {
 public:
  // `cost` must outlive the task.
  ArrivalTask(Endpoint& endpoint, const CollectiveArgs& args, const CostParams& cost);

  Status step(Progress* progress) override;
  Endpoint& endpoint() const override { return endpoint_; }
  void awaitedRanks(std::vector<int>* ranks) const override;
  std::string describe() const override;
  // The collective's start and modelled duration, as its CollectiveTask reports them.
  void appendTiming(std::vector<TaskTiming>* timings) const override;
  // The latest of this rank's arrival, the arrivals posted so far and the floors of the ranks
  // that have not posted theirs (RankRecord::arrival_floor_ns), which it asks to keep them.
  std::int64_t startFloor(std::int64_t now_ns) override;

 private:
  enum class Phase : std::uint8_t { Posting, Reading, Done };
  // Ranks whose `counter` is still below `at_least`.
  void lagging(std::atomic<std::uint64_t> RankRecord::*counter, std::uint64_t at_least, std::vector<int>* ranks) const;

  Endpoint& endpoint_;
  CollectiveArgs args_;
  const CostParams& cost_;
  Phase phase_ = Phase::Posting;
  std::uint64_t round_ = 0;  // rounds this rank posted before this one
  std::int64_t latest_ns_ = 0;
};

}  // namespace simgpu::nccl

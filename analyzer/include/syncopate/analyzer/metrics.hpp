// Time metrics of one rank inside a window (docs/analyzer.md defines each one):
//   compute        = |union of compute kernels|            (HTA: computation kernels)
//   communication  = |union of collectives and p2p|        (HTA: communication kernels)
//   memory         = |union of memcpy and memset|          (HTA: memory kernels)
//   overlapped     = |communication ∩ compute|             (HTA: comm/comp overlap)
//   exposed        = communication - overlapped
//   exposed by collective group = |group's ops - compute| for all-reduce, reduce-scatter,
//                    all-gather and the rest (p2p, broadcast, ...): a sharded job's exposed
//                    all-gathers and reduce-scatters apart (groups running at once on different
//                    streams are each counted, so these may sum to more than exposed)
//   busy           = |union of every GPU op|;  idle = window - busy
//   non_compute    = busy - compute                        (HTA temporal breakdown)
// plus HTA's per-stream idle breakdown and the kernel statistics.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "syncopate/analyzer/intervals.hpp"
#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

// The collectives whose exposed time is reported apart.
enum class CollectiveGroup : std::uint8_t { AllReduce = 0, ReduceScatter = 1, AllGather = 2, Other = 3 };
inline constexpr std::size_t kCollectiveGroups = 4;
// "all_reduce", "reduce_scatter", "all_gather", "other": the JSON keys and table columns.
const char* toString(CollectiveGroup group);
CollectiveGroup collectiveGroup(trace::CollType type);

struct TimeBreakdown {
  std::int64_t window_ns = 0;
  std::int64_t compute_ns = 0, communication_ns = 0, memory_ns = 0;
  std::int64_t overlapped_communication_ns = 0, exposed_communication_ns = 0;
  std::int64_t busy_ns = 0, idle_ns = 0, non_compute_ns = 0;
  std::array<std::int64_t, kCollectiveGroups> exposed_by_collective_ns{};  // by CollectiveGroup

  // overlapped / communication; 0 when the window holds no communication.
  double overlapRatio() const {
    return communication_ns > 0 ? static_cast<double>(overlapped_communication_ns) / static_cast<double>(communication_ns) : 0.0;
  }
  TimeBreakdown& operator+=(const TimeBreakdown& o);
};

// The unions of one rank's GPU activity, built once and measured in any window.
struct RankActivity {
  IntervalSet compute, communication, memory, busy, overlapped;
  std::array<IntervalSet, kCollectiveGroups> exposed_by_collective;  // each group's ops less compute
};
RankActivity rankActivity(const RunModel& model, Index rank);
TimeBreakdown breakdown(const RankActivity& activity, std::int64_t start, std::int64_t end);

// HTA's idle time breakdown of one stream: each gap before an op is host wait (the op's launch
// started after the previous op had finished: the host was late), kernel wait (shorter than
// `kernel_wait_threshold_ns`: back-to-back launch overhead) or other (e.g. waiting on an event).
struct StreamIdle {
  Index stream = 0;
  std::size_t ops = 0;
  std::int64_t busy_ns = 0;
  std::int64_t host_wait_ns = 0, kernel_wait_ns = 0, other_ns = 0;
  std::int64_t idleNs() const { return host_wait_ns + kernel_wait_ns + other_ns; }
};
inline constexpr std::int64_t kHtaKernelWaitThresholdNs = 30;  // HTA's consecutive_kernel_delay
// Idle breakdown of each stream of `rank`, over ops that start inside `windows`.
std::vector<StreamIdle> streamIdle(const RunModel& model, Index rank, const IntervalSet& windows,
                                   std::int64_t kernel_wait_threshold_ns = kHtaKernelWaitThresholdNs);

// Per kernel name (and memcpy/memset/collective names), over ops inside each rank's windows.
struct KernelStat {
  StringId name = 0;
  OpClass op_class = OpClass::Compute;
  std::int64_t count = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  double mean_ns = 0, stddev_ns = 0;
  std::int32_t ranks = 0;  // ranks on which it ran
};
// Sorted by total time, longest first. windows[r] is rank r's analysed time.
std::vector<KernelStat> kernelStats(const RunModel& model, const std::vector<IntervalSet>& windows);

// One name's ops on some ranks, counted in integers (the sum of squares in 128 bits), so that
// tallies made apart, rank by rank or in the processes of a distributed analysis, add up to
// exactly the tally of the whole run in any grouping.
__extension__ using SquareSum = unsigned __int128;
struct KernelTally {
  StringId name = 0;
  OpClass op_class = OpClass::Compute;  // of the name's first op (ranks in order, then ops)
  std::int64_t count = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  SquareSum sum_sq = 0;
  std::int32_t ranks = 0;
};
// Rank `rank`'s tallies over its ops that start inside `windows`, one per name, in the order of
// each name's first op.
std::vector<KernelTally> kernelTallies(const RunModel& model, Index rank, const IntervalSet& windows);

// The tallies of consecutive ranks added up: add each rank's, in rank order, to the sum of those
// before it. Names are ids of one string table (a caller adding another table's tallies maps
// their names first).
class KernelTallySum {
 public:
  void add(const std::vector<KernelTally>& rank_tallies);
  // Sorted by total time, longest first, then by name; `names` reads the ids.
  std::vector<KernelStat> stats(const StringTable& names) const;

 private:
  std::vector<KernelTally> tallies_;
  std::vector<std::uint32_t> slot_;  // by name id: 1 + index into tallies_, 0 for none
};

// Time during which each combination of kernel types ran (HTA's kernel type breakdown with
// overlaps): index bit 0 = compute, bit 1 = communication, bit 2 = memory; [0] = idle.
using KernelTypeBreakdown = std::array<std::int64_t, 8>;
KernelTypeBreakdown kernelTypeBreakdown(const RankActivity& activity, const IntervalSet& windows);

}  // namespace syncopate::analyzer

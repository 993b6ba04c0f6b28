// Collectives across ranks: for each matched call (same communicator and sequence number) when
// each rank arrived (its op started on the GPU), how long the early ones waited for the last,
// which rank was last and by how much, and the bandwidth the call achieved once everyone was
// there, with nccl-tests' formulas:
//   algbw = S / t      busbw = algbw * factor
//   AllReduce: S = count*size,       factor = 2(n-1)/n
//   ReduceScatter, AllGather, AllToAll, Gather, Scatter: S = count*size*n (count per rank),
//                                       factor = (n-1)/n
//   Broadcast, Reduce: S = count*size, factor = 1;   Send/Recv: S = count*size, factor = 1
// where t is the mean over ranks of (own end - last arrival): the time the call took once the
// straggler had arrived, as nccl-tests times calls that start together.
#pragma once

#include <cstdint>
#include <vector>

#include "syncopate/analyzer/run_model.hpp"

namespace syncopate::analyzer {

struct CollectiveTiming {
  Index match = 0;                    // row in RunModel::matches
  bool complete = false;              // every rank of the communicator is in the recording
  std::int32_t ranks = 0;             // participants present
  std::int64_t first_arrival = 0, last_arrival = 0, end = 0;  // aligned ns
  std::int64_t arrival_skew_ns = 0;   // last - first arrival
  Index straggler = kNone;            // rank row of the last arrival, when it was strictly last
  std::int64_t lateness_ns = 0;       // last - second-to-last arrival
  std::int64_t wait_ns = 0;           // sum over ranks of (last arrival - own arrival)
  std::int64_t time_ns = 0;           // t above
  std::int64_t bytes = kUnknown;      // S above
  double algbw_gbps = 0, busbw_gbps = 0;  // 0 when S or t is unknown
};

// Per rank: how often it was the straggler, by how much, and how long its own collectives waited.
struct RankCollectiveSummary {
  std::int64_t collectives = 0;
  std::int64_t times_last = 0;
  std::int64_t lateness_ns = 0;       // sum of its lateness when it was last
  std::int64_t wait_caused_ns = 0;    // waits of the other ranks in the calls it was last in
  std::int64_t wait_ns = 0;           // time its own collectives spent waiting for others
};

struct CollectiveAnalysis {
  std::vector<CollectiveTiming> calls;          // one per match, in match order
  std::vector<RankCollectiveSummary> ranks;     // index: rank row
  std::int64_t complete = 0, partial = 0;
};

CollectiveAnalysis analyzeCollectives(const RunModel& model);

// nccl-tests' S (bytes) and bus bandwidth factor of a call of `type` with `count` elements of
// `dtype` over `n` ranks; S is kUnknown when count or dtype is.
std::int64_t ncclTestsBytes(trace::CollType type, std::int64_t count, trace::DataType dtype, std::int32_t n);
double busBandwidthFactor(trace::CollType type, std::int32_t n);

}  // namespace syncopate::analyzer

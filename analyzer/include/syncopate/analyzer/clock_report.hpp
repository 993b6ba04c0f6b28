// What clock alignment did to a run (see clock_alignment.hpp for how): kept in the RunModel so
// that every report can say how far the ranks' clocks were moved and how well they agree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace syncopate::analyzer {

struct HostClock {
  std::string host;                    // the store's host name ('rank N' when unknown)
  std::vector<std::uint32_t> ranks;    // rows in RunModel::ranks
  std::int64_t realtime_offset_ns = 0; // median CLOCK_REALTIME - CLOCK_MONOTONIC of its ranks
  std::int64_t refinement_ns = 0;      // added on top, from collectives (0 for the reference)
  std::size_t samples = 0;             // collective end times the refinement used
};

struct ClockAlignment {
  std::vector<HostClock> hosts;        // hosts[0] is the reference (the host of the lowest rank)
  bool refined = false;                // at least one host was refined
  std::size_t collectives_used = 0;    // complete collectives spanning two or more hosts
  std::size_t collectives_measured = 0;  // complete collectives of two or more ranks
  // Spread (max - min) of the ranks' end times of each measured collective, median and max,
  // with realtime offsets only (before) and after refinement.
  std::int64_t residual_before_median_ns = 0, residual_before_max_ns = 0;
  std::int64_t residual_median_ns = 0, residual_max_ns = 0;
};

}  // namespace syncopate::analyzer

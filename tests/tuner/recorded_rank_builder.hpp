// Test helper: appends a call to a rank's recorded calls as the model reads them (its touches in
// the rank's table, its id its index, a host time 1 µs per call), on a thread and in an iteration.
#pragma once

#include "syncopate/tuner/recorded_calls.hpp"

namespace syncopate::tuner::testing {

inline RecordedCall& appendRecorded(RecordedRank& rank, Call c, std::int64_t iteration, analyzer::Index thread) {
  RecordedCall rc;
  rc.touch_begin = static_cast<std::uint32_t>(rank.touches.size());
  for (const Touch& t : c.touches) rank.touches.push_back(t);
  rc.touch_count = static_cast<std::uint32_t>(c.touches.size());
  c.touches = {};
  c.id = static_cast<std::uint32_t>(rank.calls.size());
  rc.call = c;
  rc.iteration = iteration;
  rc.thread = thread;
  rc.start = rc.end = static_cast<std::int64_t>(rank.calls.size()) * 1000;
  return rank.calls.emplace_back(rc);
}

}  // namespace syncopate::tuner::testing

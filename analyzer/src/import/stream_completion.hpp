// When an event recorded on a stream completes, for traces that record the record call but not
// its GPU time (Kineto's synchronisation records, Nsight's CUDA event records): the event
// completes once the stream has run every op issued to it before the record call, and not
// before that call (the recorder's rule for the markers it times by stream order). Issue order
// is correlation order: both tools number a process's API calls as they are made.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "syncopate/trace/ids.hpp"

namespace syncopate::analyzer::import {

class StreamCompletion {
 public:
  void opIssued(trace::StreamId stream, std::int64_t correlation, std::int64_t end);
  void callStarted(std::int64_t correlation, std::int64_t start);

  // The start of the call `correlation`, or nullopt when the trace does not hold it.
  std::optional<std::int64_t> callStart(std::int64_t correlation) const;
  bool hasCall(std::int64_t correlation) const { return call_start_.count(correlation) > 0; }

  // When an event recorded on `stream` by the call `correlation` completed; nullopt when neither
  // that call nor an op issued to the stream before it is in the trace.
  std::optional<std::int64_t> recordedAt(trace::StreamId stream, std::int64_t correlation);

 private:
  struct Issued {
    std::vector<std::pair<std::int64_t, std::int64_t>> ops;  // (correlation, latest end so far)
    bool ordered = true;
  };
  std::unordered_map<trace::StreamId, Issued> streams_;
  std::unordered_map<std::int64_t, std::int64_t> call_start_;  // correlation -> start
};

}  // namespace syncopate::analyzer::import

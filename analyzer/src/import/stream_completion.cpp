#include "stream_completion.hpp"

#include <algorithm>

namespace syncopate::analyzer::import {

void StreamCompletion::opIssued(trace::StreamId stream, std::int64_t correlation, std::int64_t end) {
  Issued& s = streams_[stream];
  s.ordered = false;
  s.ops.emplace_back(correlation, end);
}

void StreamCompletion::callStarted(std::int64_t correlation, std::int64_t start) { call_start_[correlation] = start; }

std::optional<std::int64_t> StreamCompletion::callStart(std::int64_t correlation) const {
  auto it = call_start_.find(correlation);
  return it == call_start_.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
}

std::optional<std::int64_t> StreamCompletion::recordedAt(trace::StreamId stream, std::int64_t correlation) {
  std::optional<std::int64_t> at = callStart(correlation);
  auto found = streams_.find(stream);
  if (found == streams_.end()) return at;
  Issued& s = found->second;
  if (!s.ordered) {
    // In correlation order, each op's end replaced by the latest end up to it: ops of one stream
    // run in issue order, but a later op may end first when the trace's clock is coarse. Ends
    // that are already such maxima stay correct when more ops are merged in.
    std::sort(s.ops.begin(), s.ops.end());
    for (std::size_t i = 1; i < s.ops.size(); ++i) s.ops[i].second = std::max(s.ops[i].second, s.ops[i - 1].second);
    s.ordered = true;
  }
  auto after = std::lower_bound(s.ops.begin(), s.ops.end(), std::make_pair(correlation, INT64_MIN));
  if (after == s.ops.begin()) return at;
  const std::int64_t done = std::prev(after)->second;
  return at ? std::max(*at, done) : done;
}

}  // namespace syncopate::analyzer::import

#include "syncopate/tuner/calls_writer.hpp"

#include <utility>

namespace syncopate::tuner {

CallsWriter::CallsWriter(const RecordedRank& from) : from_(from) {
  out_.rank = from.rank;
  out_.comm_ids = from.comm_ids;
}

void CallsWriter::append(RecordedCall rc, bool recorded) {
  rc.call.id = static_cast<std::uint32_t>(out_.calls.size());
  const auto begin = static_cast<std::uint32_t>(out_.touches.size());
  if (recorded) {
    for (std::uint32_t k = 0; k < rc.touch_count; ++k) out_.touches.push_back(from_.touches[rc.touch_begin + k]);
  } else {
    rc.touch_count = 0;
  }
  rc.touch_begin = begin;
  out_.calls.push_back(std::move(rc));
}

RecordedRank CallsWriter::finish() {
  indexIterations(out_);
  return std::move(out_);
}

RecordedRank CallEdits::applyTo(const RecordedRank& rank) const {
  CallsWriter w(rank);
  for (std::size_t i = 0; i < rank.calls.size(); ++i) {
    if (auto b = before.find(i); b != before.end())
      for (const Written& c : b->second) w.append(c.call, c.recorded);
    if (!dropped[i]) w.append(rank.calls[i], true);
    if (auto a = after.find(i); a != after.end())
      for (const Written& c : a->second) w.append(c.call, c.recorded);
  }
  return w.finish();
}

RecordedCall writtenAt(const RecordedCall& anchor, bool after_anchor, CallKind kind, StreamHandle stream,
                       std::uint64_t event) {
  RecordedCall rc;
  rc.call.kind = kind;
  rc.call.stream = stream;
  rc.call.event = event;
  rc.start = rc.end = after_anchor ? anchor.end : anchor.start;
  rc.thread = anchor.thread;
  rc.iteration = anchor.iteration;
  return rc;
}

}  // namespace syncopate::tuner

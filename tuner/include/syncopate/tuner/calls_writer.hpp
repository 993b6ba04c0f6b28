// A rank's calls written anew from its recorded ones, for the rewrites that predict a
// framework's setting (ddp_rebucket.hpp, ddp_buckets_by_size.hpp, sharded_waits.hpp): recorded
// calls kept or moved carry their touches along; calls written in place of others carry none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "syncopate/tuner/recorded_calls.hpp"

namespace syncopate::tuner {

class CallsWriter {
 public:
  explicit CallsWriter(const RecordedRank& from);

  // Appends `rc`, numbered in order; `recorded`: one of `from`'s calls, whose touches it keeps.
  void append(RecordedCall rc, bool recorded);
  // The rank written, its iterations indexed.
  RecordedRank finish();

 private:
  const RecordedRank& from_;
  RecordedRank out_;
};

// Edits to a rank's calls: some dropped, calls written before or after others (each, in the
// order written, at its place), and the rank's calls with them made.
struct CallEdits {
  struct Written {
    RecordedCall call;
    bool recorded = false;  // one of the rank's own calls, moved: it keeps its touches
  };
  explicit CallEdits(std::size_t calls) : dropped(calls, false) {}

  std::vector<bool> dropped;
  std::map<std::size_t, std::vector<Written>> before, after;

  RecordedRank applyTo(const RecordedRank& rank) const;
};

// A call written at `anchor`'s host time (its end when `after_anchor`, else its start), on its
// thread and in its iteration, taking no host time of its own.
RecordedCall writtenAt(const RecordedCall& anchor, bool after_anchor, CallKind kind, StreamHandle stream,
                       std::uint64_t event);

}  // namespace syncopate::tuner

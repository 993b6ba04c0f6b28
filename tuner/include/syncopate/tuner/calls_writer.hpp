// A rank's calls written anew from its recorded ones, for the rewrites that predict a
// framework's setting (ddp_rebucket.hpp, ddp_buckets_by_size.hpp, sharded_waits.hpp): recorded
// calls kept or moved carry their touches along; calls written in place of others carry none.
#pragma once

#include <cstdint>

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

// A call written at `anchor`'s host time (its end when `after_anchor`, else its start), on its
// thread and in its iteration, taking no host time of its own.
RecordedCall writtenAt(const RecordedCall& anchor, bool after_anchor, CallKind kind, StreamHandle stream,
                       std::uint64_t event);

}  // namespace syncopate::tuner

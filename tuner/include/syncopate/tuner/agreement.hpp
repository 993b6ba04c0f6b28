// How one agreement between ranks ended (the runtime's Executor::agree, docs/tuner.md "The
// runtime"). The ranks agree with a max-all-reduce of (digest, ~digest): every rank passed the
// same digest exactly when both maxima equal its own. That reading only holds for a collective
// that completed: one that failed (a peer died or left, the communicator was aborted) may leave
// the rank's own digest in the buffer, which would read as agreement, or anything else, which
// would read as disagreement. A failure is therefore its own outcome: it says nothing about
// what the other ranks passed, only that they can no longer be reached.
#pragma once

#include <cstdint>

namespace syncopate::tuner {

enum class Agreement : std::uint8_t {
  Agreed,      // every rank passed this digest
  Disagreed,   // the collective completed and some rank passed another digest
  PeerFailed,  // the collective failed: a rank died or left; nothing is known of the others
};

// `completed`: the collective was enqueued, completed, and its communicator reports no error.
// `max_digest`, `max_complement`: what the all-reduce left, max(d) and max(~d) over the ranks.
Agreement agreementOutcome(bool completed, std::uint64_t digest, std::uint64_t max_digest,
                           std::uint64_t max_complement);

}  // namespace syncopate::tuner

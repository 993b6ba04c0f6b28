#include "syncopate/tuner/agreement.hpp"

namespace syncopate::tuner {

Agreement agreementOutcome(bool completed, std::uint64_t digest, std::uint64_t max_digest,
                           std::uint64_t max_complement) {
  if (!completed) return Agreement::PeerFailed;
  return max_digest == digest && max_complement == ~digest ? Agreement::Agreed : Agreement::Disagreed;
}

}  // namespace syncopate::tuner

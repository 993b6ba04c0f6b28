// The runtime's agreement between ranks: a failed collective is a dead peer, never read as
// agreement or disagreement from whatever its buffer holds.
#include <gtest/gtest.h>

#include "syncopate/tuner/agreement.hpp"

namespace syncopate::tuner {
namespace {

constexpr std::uint64_t kDigest = 0x0123456789abcdefull;

TEST(Agreement, SameDigestEverywhereAgrees) {
  EXPECT_EQ(agreementOutcome(true, kDigest, kDigest, ~kDigest), Agreement::Agreed);
}

TEST(Agreement, AnotherDigestOnSomeRankDisagrees) {
  // A larger digest elsewhere raises the first maximum; a smaller one raises the second.
  EXPECT_EQ(agreementOutcome(true, kDigest, kDigest + 1, ~kDigest), Agreement::Disagreed);
  EXPECT_EQ(agreementOutcome(true, kDigest, kDigest, ~(kDigest - 1)), Agreement::Disagreed);
}

TEST(Agreement, AFailedCollectiveIsAPeerFailureWhateverItsBufferHolds) {
  // The buffer untouched by the failed collective: this rank's own values, which would read as
  // agreement.
  EXPECT_EQ(agreementOutcome(false, kDigest, kDigest, ~kDigest), Agreement::PeerFailed);
  // Partly written: would read as disagreement.
  EXPECT_EQ(agreementOutcome(false, kDigest, kDigest + 1, 0), Agreement::PeerFailed);
}

}  // namespace
}  // namespace syncopate::tuner

// The CUPTI backend's tickets, fed fabricated CUPTI records on a simulated clock: an activity
// joins its ticket through the external-correlation record in whichever order they come, and
// however late it comes (a collective waits for its slowest peer); memory stays bounded by the
// table of tickets, and a late record of a released ticket never reaches the next holder of its
// slot.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "syncopate/collector/cupti_tickets.hpp"

namespace collector_test {
namespace {

using namespace syncopate;
using preload::CuptiTickets;
using preload::Resolution;
using preload::Ticket;

constexpr std::int64_t kSecond = 1'000'000'000;

std::int64_t simulatedNow = 0;
std::int64_t simulatedClock() noexcept { return simulatedNow; }

// What CUPTI would write: records in the order given, handed over as one completed buffer per
// deliver(). The buffer holds pointers to the records; next() walks it as
// cuptiActivityGetNextRecord walks a real one.
class FakeCupti {
 public:
  void external(std::uint32_t correlation, Ticket ticket) {
    CUpti_ActivityExternalCorrelation& r = externals_.emplace_back();
    r.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    r.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    r.externalId = ticket;
    r.correlationId = correlation;
    written_.push_back(reinterpret_cast<CUpti_Activity*>(&r));
  }
  void kernel(std::uint32_t correlation, std::int64_t start, std::int64_t end) {
    CUpti_ActivityKernel10& r = kernels_.emplace_back();
    r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    r.start = static_cast<std::uint64_t>(start);
    r.end = static_cast<std::uint64_t>(end);
    r.correlationId = correlation;
    written_.push_back(reinterpret_cast<CUpti_Activity*>(&r));
  }
  void deliver(CuptiTickets& tickets) {
    tickets.consume(reinterpret_cast<std::uint8_t*>(written_.data()), written_.size() * sizeof(CUpti_Activity*), &next);
    written_.clear();
  }

 private:
  static CUptiResult next(std::uint8_t* buffer, std::size_t valid_bytes, CUpti_Activity** record) {
    auto* const* records = reinterpret_cast<CUpti_Activity* const*>(buffer);
    const std::size_t count = valid_bytes / sizeof(CUpti_Activity*);
    std::size_t at = 0;
    if (*record != nullptr) {
      while (at < count && records[at] != *record) ++at;
      ++at;
    }
    if (at >= count) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = records[at];
    return CUPTI_SUCCESS;
  }

  std::deque<CUpti_ActivityExternalCorrelation> externals_;  // deques: records never move
  std::deque<CUpti_ActivityKernel10> kernels_;
  std::vector<CUpti_Activity*> written_;
};

struct Times {
  Resolution resolution;
  std::int64_t start = 0;
  std::int64_t end = 0;
};

Times ask(CuptiTickets& tickets, Ticket ticket) {
  Times t{};
  t.resolution = tickets.resolve(ticket, t.start, t.end);
  return t;
}

class CuptiTicketsTest : public ::testing::Test {
 protected:
  void SetUp() override { simulatedNow = 1000 * kSecond; }
};

// A collective whose peers keep it waiting: its kernel's record comes 90 s after the call, the
// recorder asking for its times every second meanwhile and the backend sweeping as it does. It
// stays pending all along (never given up, its join never forgotten) and gets its own times.
TEST_F(CuptiTicketsTest, AnActivityThatComesMinutesLateStillTimesItsOp) {
  CuptiTickets tickets(&simulatedClock, 16);
  FakeCupti cupti;
  const Ticket ticket = tickets.open();
  ASSERT_NE(ticket, preload::kNoTicket);
  const std::int64_t called = simulatedNow;
  cupti.external(7, ticket);  // written when the call returns, delivered at the next flush
  cupti.deliver(tickets);
  for (int second = 0; second <= 90; ++second) {
    simulatedNow = called + second * kSecond;
    EXPECT_EQ(ask(tickets, ticket).resolution, Resolution::Pending) << "asked " << second << " s after the call";
    tickets.sweep();
  }
  cupti.kernel(7, called + 2 * kSecond, simulatedNow - kSecond);
  cupti.deliver(tickets);
  const Times times = ask(tickets, ticket);
  ASSERT_EQ(times.resolution, Resolution::Resolved);
  EXPECT_EQ(times.start, called + 2 * kSecond);
  EXPECT_EQ(times.end, simulatedNow - kSecond);
  tickets.release(ticket);
  EXPECT_EQ(ask(tickets, ticket).resolution, Resolution::Failed) << "nobody holds it any more";
}

// CUPTI may hand over an activity before the record that joins it to its ticket.
TEST_F(CuptiTicketsTest, AnActivityBeforeItsCorrelationRecordIsJoinedWhenThatComes) {
  CuptiTickets tickets(&simulatedClock, 16);
  FakeCupti cupti;
  const Ticket ticket = tickets.open();
  cupti.kernel(3, 500, 900);
  cupti.deliver(tickets);
  EXPECT_EQ(ask(tickets, ticket).resolution, Resolution::Pending);
  simulatedNow += 30 * kSecond;
  tickets.sweep();
  cupti.external(3, ticket);
  cupti.deliver(tickets);
  const Times times = ask(tickets, ticket);
  ASSERT_EQ(times.resolution, Resolution::Resolved);
  EXPECT_EQ(times.start, 500);
  EXPECT_EQ(times.end, 900);
}

// The kernels an NCCL group launches under one ticket (one op per collective, each holding a
// reference): the ticket resolves to their span and its slot is free once every op let go.
TEST_F(CuptiTicketsTest, ASharedTicketSpansItsActivitiesAndIsFreedByItsLastRelease) {
  CuptiTickets tickets(&simulatedClock, 1);
  FakeCupti cupti;
  const Ticket ticket = tickets.open();
  tickets.share(ticket, 2);
  cupti.external(10, ticket);
  cupti.external(11, ticket);
  cupti.kernel(10, 300, 700);
  cupti.kernel(11, 200, 600);
  cupti.deliver(tickets);
  const Times times = ask(tickets, ticket);
  ASSERT_EQ(times.resolution, Resolution::Resolved);
  EXPECT_EQ(times.start, 200);
  EXPECT_EQ(times.end, 700);
  tickets.release(ticket);
  tickets.release(ticket);
  EXPECT_EQ(tickets.open(), preload::kNoTicket) << "one op still holds the only slot";
  EXPECT_EQ(ask(tickets, ticket).resolution, Resolution::Resolved);
  tickets.release(ticket);
  EXPECT_NE(tickets.open(), preload::kNoTicket);
}

// Memory is bounded by the table: with every ticket pending (their ops' peers all late), the
// next op gets none (the recorder counts it untimed) rather than a ticket being given up; a
// release makes room. A late record of the released ticket (its call failed: CUPTI still wrote
// its API record) reaches neither it nor the ticket that holds its slot next.
TEST_F(CuptiTicketsTest, EveryTicketHeldMeansNoTicketNotAGivenUpOne) {
  constexpr std::uint32_t kCapacity = 4;
  CuptiTickets tickets(&simulatedClock, kCapacity);
  FakeCupti cupti;
  std::vector<Ticket> held;
  for (std::uint32_t i = 0; i < kCapacity; ++i) held.push_back(tickets.open());
  for (Ticket t : held) ASSERT_NE(t, preload::kNoTicket);
  EXPECT_EQ(tickets.open(), preload::kNoTicket);
  simulatedNow += 120 * kSecond;
  tickets.sweep();
  for (Ticket t : held) EXPECT_EQ(ask(tickets, t).resolution, Resolution::Pending);
  EXPECT_EQ(tickets.open(), preload::kNoTicket) << "nothing is freed by waiting";

  const Ticket failed = held.back();
  held.pop_back();
  tickets.release(failed);
  const Ticket next = tickets.open();
  ASSERT_NE(next, preload::kNoTicket);
  EXPECT_NE(next, failed) << "a slot's next holder has a ticket of its own";
  cupti.external(20, failed);
  cupti.kernel(20, 1, 2);
  cupti.deliver(tickets);
  EXPECT_EQ(ask(tickets, next).resolution, Resolution::Pending);
  EXPECT_EQ(ask(tickets, failed).resolution, Resolution::Failed);
  cupti.external(21, next);
  cupti.kernel(21, 40, 50);
  cupti.deliver(tickets);
  const Times times = ask(tickets, next);
  ASSERT_EQ(times.resolution, Resolution::Resolved);
  EXPECT_EQ(times.start, 40);
  EXPECT_EQ(times.end, 50);
}

}  // namespace
}  // namespace collector_test

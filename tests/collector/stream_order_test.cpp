// Pending ops become rows in the order their streams run them: a stream's head is resolved
// first; event records and waits take their time from stream order (identically for both
// backends); what cannot be timed is counted, never written with made-up times.
#include <gtest/gtest.h>

#include <map>

#include "syncopate/collector/stream_order.hpp"

namespace collector_test {
namespace {

using namespace syncopate;
using preload::Resolution;
using preload::Ticket;

// A timing backend whose answers the test decides.
class ScriptedTiming final : public preload::TimingBackend {
 public:
  struct Answer {
    Resolution resolution = Resolution::Pending;
    std::int64_t start = 0;
    std::int64_t end = 0;
  };
  std::map<Ticket, Answer> answers;
  std::map<Ticket, int> released;

  const char* name() const noexcept override { return "scripted"; }
  Ticket begin(int, cudaStream_t, std::uint32_t) noexcept override { return preload::kNoTicket; }
  bool end(Ticket, cudaStream_t, bool) noexcept override { return false; }
  void share(Ticket, int) noexcept override {}
  void collect() noexcept override {}
  Resolution resolve(Ticket ticket, std::int64_t& start, std::int64_t& end) noexcept override {
    const Answer& answer = answers[ticket];
    start = answer.start;
    end = answer.end;
    return answer.resolution;
  }
  void release(Ticket ticket) noexcept override { ++released[ticket]; }
  void drain(std::int64_t) noexcept override {}
};

trace::OpRecord pending(trace::OpKind kind, trace::StreamId stream, std::uint32_t correlation, Ticket ticket,
                        trace::EventId event = 0) {
  trace::OpRecord op = kind == trace::OpKind::EventRecord || kind == trace::OpKind::StreamWait
                           ? trace::OpRecord::event(kind, stream, correlation, event, 0, 0)
                           : trace::OpRecord::launch(kind, stream, correlation, 1, 0, 0);
  op.end_ns = static_cast<std::int64_t>(ticket);
  return op;
}

std::vector<trace::OpRecord> resolve(preload::StreamOrder& order, ScriptedTiming& timing,
                                     preload::RecorderCounters& counters) {
  std::vector<trace::Record> out;
  order.resolve(timing, out, counters);
  std::vector<trace::OpRecord> ops;
  for (const auto& record : out) ops.push_back(record.as<trace::OpRecord>());
  return ops;
}

TEST(StreamOrder, ResolvesEachStreamFromItsHead) {
  preload::StreamOrder order;
  ScriptedTiming timing;
  preload::RecorderCounters counters;
  order.add(pending(trace::OpKind::Kernel, 1, 10, 100), 1000);
  order.add(pending(trace::OpKind::Kernel, 1, 11, 101), 1100);
  timing.answers[101] = {Resolution::Resolved, 3000, 4000};  // the second is known first
  EXPECT_TRUE(resolve(order, timing, counters).empty()) << "the head is still running";
  timing.answers[100] = {Resolution::Resolved, 2000, 3000};
  auto ops = resolve(order, timing, counters);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].correlation_id, 10u);
  EXPECT_EQ(ops[0].start_ns, 2000);
  EXPECT_EQ(ops[1].end_ns, 4000);
  EXPECT_EQ(timing.released[100], 1);
  EXPECT_EQ(timing.released[101], 1);
  EXPECT_EQ(order.pendingCount(), 0u);
}

TEST(StreamOrder, MarkersTakeTheirTimeFromStreamOrder) {
  preload::StreamOrder order;
  ScriptedTiming timing;
  preload::RecorderCounters counters;
  // Stream 1: kernel (ends at 5000), then record event 7. Stream 2: waits for event 7 (issued
  // before the record completed), then nothing else.
  order.add(pending(trace::OpKind::Kernel, 1, 1, 100), 1000);
  order.add(pending(trace::OpKind::EventRecord, 1, 2, preload::kStreamOrderTicket, 7), 1200);
  order.add(pending(trace::OpKind::StreamWait, 2, 3, preload::kStreamOrderTicket, 7), 1300);
  EXPECT_TRUE(resolve(order, timing, counters).empty()) << "the wait needs the record, the record the kernel";
  timing.answers[100] = {Resolution::Resolved, 2000, 5000};
  auto ops = resolve(order, timing, counters);
  ASSERT_EQ(ops.size(), 3u);
  std::map<trace::OpKind, trace::OpRecord> by_kind;
  for (const auto& op : ops) by_kind[op.kind] = op;
  EXPECT_EQ(by_kind[trace::OpKind::EventRecord].start_ns, 5000);
  EXPECT_EQ(by_kind[trace::OpKind::EventRecord].end_ns, 5000);
  EXPECT_EQ(by_kind[trace::OpKind::StreamWait].start_ns, 5000);
  // A record on an idle stream happens when issued.
  order.add(pending(trace::OpKind::EventRecord, 3, 4, preload::kStreamOrderTicket, 8), 9000);
  ops = resolve(order, timing, counters);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].start_ns, 9000);
}

TEST(StreamOrder, AWaitUsesTheRecordIssuedBeforeIt) {
  preload::StreamOrder order;
  ScriptedTiming timing;
  preload::RecorderCounters counters;
  order.add(pending(trace::OpKind::EventRecord, 1, 1, preload::kStreamOrderTicket, 7), 1000);
  order.add(pending(trace::OpKind::StreamWait, 2, 2, preload::kStreamOrderTicket, 7), 1500);
  // A later record of the same event, behind a long kernel, must not hold the earlier wait.
  order.add(pending(trace::OpKind::Kernel, 1, 3, 100), 2000);
  order.add(pending(trace::OpKind::EventRecord, 1, 4, preload::kStreamOrderTicket, 7), 2500);
  auto ops = resolve(order, timing, counters);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].kind, trace::OpKind::StreamWait);
  EXPECT_EQ(ops[1].start_ns, 1500);
}

TEST(StreamOrder, FailuresAreCountedAndNothingIsMadeUp) {
  preload::StreamOrder order;
  ScriptedTiming timing;
  preload::RecorderCounters counters;
  order.add(pending(trace::OpKind::Kernel, 1, 1, 100), 1000);
  order.add(pending(trace::OpKind::Kernel, 1, 2, 101), 1100);
  order.add(pending(trace::OpKind::Kernel, 2, 3, 102), 1200);
  timing.answers[100] = {Resolution::Failed, 0, 0};
  timing.answers[101] = {Resolution::Resolved, 5, 6};
  auto ops = resolve(order, timing, counters);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].correlation_id, 2u);
  EXPECT_EQ(counters.ops_untimed_timing_failed.load(), 1u);
  EXPECT_EQ(timing.released[100], 1);
  order.abandon(timing, counters);  // at exit: the one still pending
  EXPECT_EQ(counters.ops_untimed_timing_failed.load(), 2u);
  EXPECT_EQ(timing.released[102], 1);
  EXPECT_EQ(order.pendingCount(), 0u);
}

}  // namespace
}  // namespace collector_test

// Pending ops become rows in the order their streams run them: a stream's head is resolved
// first; event records and waits take their time from stream order (identically for both
// backends); what cannot be timed is counted, never written with made-up times.
#include <gtest/gtest.h>

#include <map>
#include <set>

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
                                     preload::RecorderCounters& counters, std::int64_t now_ns = 1'000'000'000,
                                     bool drained = false) {
  std::vector<trace::Record> out;
  order.resolve(timing, out, counters, now_ns, drained);
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

TEST(StreamOrder, OpsOfSeveralThreadsOnOneStreamResolveInIssueOrder) {
  preload::StreamOrder order;
  ScriptedTiming timing;
  preload::RecorderCounters counters;
  // Two threads issue to stream 1 (as autograd's thread and the main thread do): thread A
  // records event 7 on it at 1000; thread B makes stream 1 wait for event 8 at 3000. Stream 2
  // waits for event 7 at 2000, then records event 8 at 2500. Thread B's ring is drained before
  // thread A's, so stream 1's wait arrives before its earlier record.
  order.add(pending(trace::OpKind::StreamWait, 2, 2, preload::kStreamOrderTicket, 7), 2000);
  order.add(pending(trace::OpKind::EventRecord, 2, 3, preload::kStreamOrderTicket, 8), 2500);
  order.add(pending(trace::OpKind::StreamWait, 1, 4, preload::kStreamOrderTicket, 8), 3000);  // thread B
  order.add(pending(trace::OpKind::EventRecord, 1, 1, preload::kStreamOrderTicket, 7), 1000);  // thread A
  auto ops = resolve(order, timing, counters);
  ASSERT_EQ(ops.size(), 4u) << "a queue in drain order would deadlock: each stream's head waits on the other";
  std::map<std::uint32_t, trace::OpRecord> by_correlation;
  for (const auto& op : ops) by_correlation[op.correlation_id] = op;
  EXPECT_EQ(by_correlation[1].start_ns, 1000);
  EXPECT_EQ(by_correlation[2].start_ns, 2000);
  EXPECT_EQ(by_correlation[3].start_ns, 2500);
  EXPECT_EQ(by_correlation[4].start_ns, 3000);
  EXPECT_EQ(order.pendingCount(), 0u);
  EXPECT_EQ(counters.ops_untimed_timing_failed.load(), 0u);
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

TEST(StreamOrder, AnOpWithoutGpuWorkTakesItsPlaceInStreamOrder) {
  preload::StreamOrder order;
  ScriptedTiming timing;
  preload::RecorderCounters counters;
  // A kernel (2000..5000), a 0-byte copy issued while it ran, a 0-byte copy on an idle stream.
  order.add(pending(trace::OpKind::Kernel, 1, 1, 100), 1000);
  order.add(pending(trace::OpKind::Memcpy, 1, 2, preload::kStreamOrderTicket), 1500);
  order.add(pending(trace::OpKind::Memcpy, 2, 3, preload::kStreamOrderTicket), 1600);
  timing.answers[100] = {Resolution::Resolved, 2000, 5000};
  auto ops = resolve(order, timing, counters);
  ASSERT_EQ(ops.size(), 3u);
  std::map<std::uint32_t, trace::OpRecord> by_correlation;
  for (const auto& op : ops) by_correlation[op.correlation_id] = op;
  EXPECT_EQ(by_correlation[2].start_ns, 5000);
  EXPECT_EQ(by_correlation[2].end_ns, 5000);
  EXPECT_EQ(by_correlation[3].start_ns, 1600);
  EXPECT_EQ(by_correlation[3].end_ns, 1600);
  EXPECT_EQ(counters.ops_without_gpu_activity.load(), 0u) << "known to do no work: not a surprise";
}

// A head whose times never come (CUDA did it without GPU work): once later work on its stream has
// finished and the head's times still have not come a while later, it takes its place in stream
// order, counted; until then it holds its stream, as a head still running must.
TEST(StreamOrder, AHeadOvertakenByLaterWorkIsNotWaitedForEver) {
  preload::StreamOrder order;
  ScriptedTiming timing;
  preload::RecorderCounters counters;
  constexpr std::int64_t kOneSecondNs = 1'000'000'000;
  order.add(pending(trace::OpKind::Kernel, 1, 1, 100), 1000);  // its work finishes: 2000..3000
  order.add(pending(trace::OpKind::Memcpy, 1, 2, 101), 4000);  // no activity ever
  order.add(pending(trace::OpKind::Kernel, 1, 3, 102), 5000);
  timing.answers[100] = {Resolution::Resolved, 2000, 3000};
  EXPECT_EQ(resolve(order, timing, counters, kOneSecondNs).size(), 1u) << "the later kernel is still running";
  EXPECT_TRUE(resolve(order, timing, counters, kOneSecondNs + 200'000'000).empty());
  timing.answers[102] = {Resolution::Resolved, 6000, 7000};
  // Seen overtaken at the next look (at most every 100 ms), then given 500 ms for its times.
  EXPECT_TRUE(resolve(order, timing, counters, kOneSecondNs + 300'000'000).empty());
  EXPECT_TRUE(resolve(order, timing, counters, kOneSecondNs + 700'000'000).empty());
  auto ops = resolve(order, timing, counters, kOneSecondNs + 900'000'000);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].correlation_id, 2u);
  EXPECT_EQ(ops[0].start_ns, 4000) << "after the kernel before it, when it was issued";
  EXPECT_EQ(ops[0].end_ns, 4000);
  EXPECT_EQ(ops[1].correlation_id, 3u);
  EXPECT_EQ(ops[1].start_ns, 6000);
  EXPECT_EQ(counters.ops_without_gpu_activity.load(), 1u);
  EXPECT_EQ(counters.ops_untimed_timing_failed.load(), 0u);
  EXPECT_EQ(timing.released[101], 1);
}

TEST(StreamOrder, OnceDrainedAnOvertakenHeadIsNotWaitedFor) {
  preload::StreamOrder order;
  ScriptedTiming timing;
  preload::RecorderCounters counters;
  order.add(pending(trace::OpKind::Memset, 1, 1, 100), 1000);  // no activity ever
  order.add(pending(trace::OpKind::Kernel, 1, 2, 101), 2000);
  order.add(pending(trace::OpKind::Memset, 2, 3, 102), 3000);  // no activity, nothing after it
  timing.answers[101] = {Resolution::Resolved, 2500, 3500};
  auto ops = resolve(order, timing, counters, 1'000'000'000, /*drained=*/true);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].correlation_id, 1u);
  EXPECT_EQ(ops[0].start_ns, 1000);
  EXPECT_EQ(ops[1].correlation_id, 2u);
  EXPECT_EQ(counters.ops_without_gpu_activity.load(), 1u);
  // Nothing finished after the last one: whether it did work is unknown; abandoned, counted.
  order.abandon(timing, counters);
  EXPECT_EQ(counters.ops_untimed_timing_failed.load(), 1u);
}

// What a host synchronize proves finished (noteHostSync): ops whose times never come are written
// once proven, and only then. Streams 1 and 2 are device 0's, stream 3 device 1's.
class StreamOrderProof : public ::testing::Test {
 protected:
  static constexpr std::int64_t kReturnedNs = 2'000'000'000;  // about when the synchronizes return
  std::vector<trace::OpRecord> resolveAt(std::int64_t now_ns) { return resolve(order, timing, counters, now_ns); }
  void prove(const trace::OpRecord& sync) {
    order.noteHostSync(sync, [](trace::StreamId stream) { return stream == 3 ? 1 : 0; });
  }
  preload::StreamOrder order;
  ScriptedTiming timing;
  preload::RecorderCounters counters;
};

// NCCL runs a one-rank in-place all-reduce without a kernel, so nothing later on its stream ever
// finishes on the GPU; PyTorch's compute stream waits for it through an event, and the host
// waits for the compute stream's last event each step. That event synchronize proves the compute
// stream finished up to the record, the wait on it proves the collective's stream finished up to
// the event it waited for: the collective is written without GPU work, and both streams move on.
TEST_F(StreamOrderProof, AHostSyncProvesWhatItAndTheWaitsBeforeItWaitedFor) {
  order.add(pending(trace::OpKind::Collective, 1, 1, 100), 1000);  // no activity ever
  order.add(pending(trace::OpKind::EventRecord, 1, 2, preload::kStreamOrderTicket, 7), 1100);
  order.add(pending(trace::OpKind::StreamWait, 2, 3, preload::kStreamOrderTicket, 7), 1200);
  order.add(pending(trace::OpKind::Kernel, 2, 4, 101), 1300);
  order.add(pending(trace::OpKind::EventRecord, 2, 5, preload::kStreamOrderTicket, 8), 1400);
  timing.answers[101] = {Resolution::Resolved, 3000, 4000};
  EXPECT_TRUE(resolveAt(kReturnedNs).empty())
      << "nothing proves the collective finished yet";

  prove(trace::OpRecord::syncEvent(8, trace::kNoStream, 6, 5000, kReturnedNs));
  EXPECT_TRUE(resolveAt(kReturnedNs + 100'000'000).empty())
      << "its times may still be on their way a while after the proof is first seen";
  EXPECT_TRUE(resolveAt(kReturnedNs + 500'000'000).empty());
  auto ops = resolveAt(kReturnedNs + 600'000'000);
  ASSERT_EQ(ops.size(), 5u);
  std::map<std::uint32_t, trace::OpRecord> by_correlation;
  for (const auto& op : ops) by_correlation[op.correlation_id] = op;
  EXPECT_EQ(by_correlation[1].start_ns, 1000);
  EXPECT_EQ(by_correlation[1].end_ns, 1000);
  EXPECT_EQ(by_correlation[3].start_ns, 1200) << "the wait, once its record is placed";
  EXPECT_EQ(by_correlation[4].start_ns, 3000);
  EXPECT_EQ(by_correlation[5].start_ns, 4000);
  EXPECT_EQ(counters.ops_without_gpu_activity.load(), 1u);
  EXPECT_EQ(counters.ops_untimed_timing_failed.load(), 0u);
  EXPECT_EQ(order.pendingCount(), 0u);
}

// A stream synchronize proves its stream up to the call, nothing issued after it; a device
// synchronize proves that device's streams, not another device's.
TEST_F(StreamOrderProof, ASyncProvesOnlyWhatWasIssuedBeforeItOnWhatItWaitedFor) {
  order.add(pending(trace::OpKind::Collective, 1, 1, 100), 1000);  // no activity ever
  order.add(pending(trace::OpKind::Collective, 1, 2, 101), 7000);  // issued after the sync below
  order.add(pending(trace::OpKind::Collective, 2, 3, 102), 1000);  // no activity ever
  order.add(pending(trace::OpKind::Collective, 3, 4, 103), 1000);  // device 1: no activity ever
  prove(trace::OpRecord::syncStream(1, 5, 5000, kReturnedNs));
  EXPECT_TRUE(resolveAt(kReturnedNs + 100'000'000).empty());
  auto ops = resolveAt(kReturnedNs + 600'000'000);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].correlation_id, 1u);

  prove(trace::OpRecord::syncDevice(trace::SyncKind::Device, 0, 6, 8000, kReturnedNs + 1));
  EXPECT_TRUE(resolveAt(kReturnedNs + 700'000'000).empty());
  ops = resolveAt(kReturnedNs + 1'200'000'000);
  std::set<std::uint32_t> correlations;
  for (const auto& op : ops) correlations.insert(op.correlation_id);
  EXPECT_EQ(correlations, (std::set<std::uint32_t>{2, 3}));
  EXPECT_EQ(order.pendingCount(), 1u) << "device 1's collective is not proven by device 0's synchronize";
  EXPECT_EQ(counters.ops_without_gpu_activity.load(), 3u);
}

// A proof says only that the work is over, not that it had none: times that come within the
// wait after the proof are the op's; and an op whose call returned after the synchronize began
// (another thread's) is not proven by it.
TEST_F(StreamOrderProof, AProvenOpKeepsTimesThatComeAndALaterCallIsNotProven) {
  order.add(pending(trace::OpKind::Kernel, 1, 1, 100), 1000, 1100);
  order.add(pending(trace::OpKind::Kernel, 2, 2, 101), 1000, 9000);  // returned after the sync began
  prove(trace::OpRecord::syncDevice(trace::SyncKind::Device, 0, 3, 5000, 8000));
  EXPECT_TRUE(resolveAt(kReturnedNs).empty());
  timing.answers[100] = {Resolution::Resolved, 2000, 4000};
  auto ops = resolveAt(kReturnedNs + 100'000'000);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].start_ns, 2000);
  EXPECT_EQ(ops[0].end_ns, 4000);
  EXPECT_TRUE(resolveAt(kReturnedNs + 5'000'000'000).empty()) << "the later call is still pending";
  EXPECT_EQ(counters.ops_without_gpu_activity.load(), 0u);
}

}  // namespace
}  // namespace collector_test

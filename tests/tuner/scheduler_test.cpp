// The scheduler's decisions, action by action, on small call sequences whose correct
// handling is known in advance.
#include <gtest/gtest.h>

#include <algorithm>

#include "action_log.hpp"
#include "call_program.hpp"
#include "syncopate/tuner/scheduler.hpp"

namespace syncopate::tuner {
namespace {

using testing::ActionLog;
using testing::CallProgram;
using Lines = std::vector<std::string>;

// The rules of the tests that need no plan (a Scheduler keeps a reference to its rules).
const ScheduleRules kDefaultRules{};

// Small tables, so that event slot numbers are easy to read:
// positions 0..7, unit done events 8..15, the join event 16, producer events 17..32.
SchedulerLimits smallLimits() {
  SchedulerLimits l;
  l.streams = 8;
  l.tensors = 16;
  l.held = 8;
  l.units = 8;
  l.touch_events = 16;
  l.app_events = 16;
  return l;
}

constexpr StreamHandle kS = 1;  // the compute stream
constexpr StreamHandle kC = 2;  // a second application stream
constexpr std::uint64_t kGrads = 0x10000;
constexpr std::uint64_t kParams = 0x20000;
constexpr std::uint64_t kActs = 0x30000;
constexpr std::uint64_t kHost = 0x90000;
constexpr std::uint64_t kLayerFloats = 256;
constexpr std::uint64_t kLayerBytes = kLayerFloats * 4;
constexpr std::uint64_t kOptDone = 0xE1, kCheckDone = 0xE2;

std::uint64_t grad(int l) { return kGrads + static_cast<std::uint64_t>(l) * kLayerBytes; }

GroupPlan planOf(const std::vector<Call>& members, std::vector<std::uint32_t> bucket_first,
                 std::vector<std::uint16_t> parts, std::vector<UnitRef> order) {
  GroupPlan g;
  GroupSignature sig;
  for (const Call& c : members) sig.add(c.collective);
  g.signature = sig.value();
  g.members = static_cast<std::uint32_t>(members.size());
  g.bucket_first = std::move(bucket_first);
  g.parts = std::move(parts);
  g.order = std::move(order);
  EXPECT_EQ(validateGroupPlan(g), "");
  return g;
}

// A scheduler whose plan holds one all-reduce of grad(0) on kS (issued from a blocking stream
// unless said otherwise), the set-up of most tests below.
struct OnePlannedAllReduce {
  explicit OnePlannedAllReduce(bool blocking = true) : ar(allReduceFrom(p, blocking)), rules(planFor(ar)) {}
  static Call allReduceFrom(CallProgram& program, bool blocking) {
    Call call = program.allReduce(kS, grad(0), kLayerFloats);
    call.blocking_stream = blocking;
    return call;
  }
  static ScheduleRules planFor(const Call& call) {
    ScheduleRules planned;
    planned.groups.push_back(planOf({call}, {0}, {1}, {{0, 0}}));
    return planned;
  }
  CallProgram p;
  const Call ar;
  const ScheduleRules rules;
  ActionLog log;
  Scheduler s{rules, log, smallLimits()};
};

// One iteration of a naive data-parallel step of three layers on stream S, with a gradient
// check copy on stream C, as dp_trainer's naive mode issues it.
struct NaiveStep {
  explicit NaiveStep(CallProgram& program) : p(program) {}
  CallProgram& p;
  std::vector<Call> calls;
  std::vector<Call> allreduces;
  void build(bool first) {
    if (!first) calls.push_back(p.wait(kS, kCheckDone));
    calls.push_back(p.memset(kS, kGrads, 3 * kLayerBytes));
    for (int l = 2; l >= 0; --l) calls.push_back(p.kernel(kS, {grad(l), kActs}));
    for (int l = 0; l < 3; ++l) {
      allreduces.push_back(p.allReduce(kS, grad(l), kLayerFloats));
      calls.push_back(allreduces.back());
    }
    for (int l = 0; l < 3; ++l) calls.push_back(p.kernel(kS, {kParams + static_cast<std::uint64_t>(l) * 64, grad(l)}));
    calls.push_back(p.record(kS, kOptDone));
    calls.push_back(p.wait(kC, kOptDone));
    calls.push_back(p.memcpy(kC, kHost, kGrads, 3 * kLayerBytes));
    calls.push_back(p.record(kC, kCheckDone));
  }
};

TEST(Scheduler, NaiveStepFirstIterationWaitsForPositionsThenProducers) {
  CallProgram p;
  NaiveStep first(p), second(p);
  first.build(true);
  second.build(false);
  ScheduleRules rules;
  rules.plan_checksum = 42;
  rules.groups.push_back(planOf(first.allreduces, {0, 1, 2}, {1, 1, 1}, {{2, 0}, {1, 0}, {0, 0}}));
  ActionLog log;
  Scheduler s(rules, log, smallLimits());
  for (const Call& c : first.calls) s.onCall(c);
  const Lines expected_first = {
      "call 1",                   // memset: no buffer is known yet
      "call 2", "call 3", "call 4",
      "record 0 on s1", "record 1 on s1", "record 2 on s1",  // all-reduces held, positions kept
      "agree",                    // the first consumer flushes the group
      "wait comm 2", "unit 7 [0+256] contiguous on comm", "record 8 on comm",
      "wait comm 1", "unit 6 [0+256] contiguous on comm", "record 9 on comm",
      "wait comm 0", "unit 5 [0+256] contiguous on comm", "record 10 on comm",
      "wait s1 10", "call 8", "record 17 on s1",  // update of layer 0 waits for its bucket (the last)
      "call 9", "record 18 on s1",
      "call 10", "record 19 on s1",
      "call 11", "call 12",       // its event already covers every unit: no join
      "call 13", "record 20 on s2",
      "call 14"};
  EXPECT_EQ(log.lines, expected_first);

  const std::size_t mark = log.lines.size();
  for (const Call& c : second.calls) s.onCall(c);
  const Lines expected_second = {
      "call 15",
      "call 16", "record 21 on s1",  // memset now touches the three buffers
      "call 17", "record 22 on s1", "call 18", "record 23 on s1", "call 19", "record 24 on s1",
      // The all-reduces are held; their producers are proven, so their positions are not needed.
      "agree",
      // Each bucket now waits only for the kernel that produced it.
      "wait comm 22", "unit 22 [0+256] contiguous on comm", "record 11 on comm",
      "wait comm 23", "unit 21 [0+256] contiguous on comm", "record 12 on comm",
      "wait comm 24", "unit 20 [0+256] contiguous on comm", "record 13 on comm",
      "wait s1 13", "call 23", "record 25 on s1",
      "call 24", "record 26 on s1",
      "call 25", "record 27 on s1",
      "call 26", "call 27", "call 28", "record 28 on s2", "call 29"};
  EXPECT_EQ(log.since(mark), expected_second);
  EXPECT_EQ(s.stats().planned_groups, 2u);
  EXPECT_EQ(s.stats().position_waits, 3u);
  EXPECT_EQ(s.stats().producer_waits, 3u);
  EXPECT_EQ(s.stats().units, 6u);
  // The first flush, and the second because the plan reverses the group: each agrees on the
  // history of every group so far, so the same group gives another digest the second time.
  EXPECT_EQ(log.digests.size(), 2u);
  EXPECT_NE(log.digests[0], log.digests[1]);
}

TEST(Scheduler, ProducerOnAnotherStreamWithoutOrderingFallsBackToPosition) {
  OnePlannedAllReduce planned;
  auto& [p, ar, rules, log, s] = planned;
  s.onCall(ar);                                // registers the buffer
  s.onCall(p.kernel(kS, {grad(0)}));           // flush, then consumer waits
  s.onCall(p.kernel(kC, {grad(0)}));           // touched on C, never ordered with S
  s.onCall(p.kernel(kS, {grad(0)}));           // last touch on S, but it does not follow C's
  const std::size_t mark = log.lines.size();
  s.onCall(p.allReduce(kS, grad(0), kLayerFloats));
  s.onCall(p.of(CallKind::DeviceSync));
  // A group of one issued as called changes no NCCL order: no agreement after the first flush.
  const Lines expected = {"record 0 on s1", "flush", "wait comm 0",
                          "unit 5 [0+256] contiguous on comm", "record 9 on comm", "call 6"};
  EXPECT_EQ(log.since(mark), expected);
  EXPECT_EQ(s.stats().position_waits, 2u);
}

TEST(Scheduler, EventRecordAfterRedirectedWorkIsJoined) {
  OnePlannedAllReduce planned;
  auto& [p, ar, rules, log, s] = planned;
  s.onCall(ar);
  s.onCall(p.record(kS, kOptDone));  // flushes; the event must cover the redirected all-reduce
  s.onCall(p.wait(kC, kOptDone));
  s.onCall(p.kernel(kC, {grad(0)}));  // ordered by the event: no extra wait
  const Lines expected = {"record 0 on s1", "agree", "wait comm 0", "unit 1 [0+256] contiguous on comm",
                          "record 8 on comm", "record 16 on s1", "wait join 16", "wait join 8", "call 2 on join",
                          "call 3", "call 4", "record 17 on s2"};
  EXPECT_EQ(log.lines, expected);
  EXPECT_EQ(s.stats().joins, 1u);
  EXPECT_EQ(s.stats().deferred_waits, 0u);
}

TEST(Scheduler, StreamSyncAndQueryCoverRedirectedWork) {
  OnePlannedAllReduce planned;
  auto& [p, ar, rules, log, s] = planned;
  s.onCall(ar);
  s.onCall(p.of(CallKind::StreamQuery, kS));
  s.onCall(p.of(CallKind::StreamSync, kS));
  s.onCall(p.of(CallKind::StreamQuery, kS));  // the host has waited: plain query
  s.onCall(p.kernel(kC, {grad(0)}));          // after the host sync: no wait needed
  const Lines expected = {"record 0 on s1", "agree", "wait comm 0", "unit 1 [0+256] contiguous on comm",
                          "record 8 on comm", "query 2 with 8", "call 3", "host wait 8", "call 4", "call 5",
                          "record 17 on s2"};
  EXPECT_EQ(log.lines, expected);
}

// An event recorded behind a held all-reduce reads as done only when the all-reduce is: CUDA
// calls an event done once the work before its record is, and the runtime recorded it late.
TEST(Scheduler, EventQueryCoversRedirectedWork) {
  OnePlannedAllReduce planned;
  auto& [p, ar, rules, log, s] = planned;
  s.onCall(ar);
  s.onCall(p.record(kS, kOptDone));
  s.onCall(p.eventQuery(kOptDone));
  s.onCall(p.eventSync(kOptDone));
  s.onCall(p.eventQuery(kOptDone));  // the host has waited for the event: plain query
  s.onCall(p.eventQuery(kCheckDone));  // an event the scheduler never saw recorded: plain query
  const Lines expected = {"record 0 on s1", "agree", "wait comm 0", "unit 1 [0+256] contiguous on comm",
                          "record 8 on comm", "record 16 on s1", "wait join 16", "wait join 8", "call 2 on join",
                          "query 3 with 8", "call 4", "call 5", "call 6"};
  EXPECT_EQ(log.lines, expected);
}

TEST(Scheduler, UnplannedGroupKeepsOriginalOrderOnOriginalStream) {
  CallProgram p;
  ScheduleRules rules;  // knows no group
  ActionLog log;
  Scheduler s(rules, log, smallLimits());
  s.onCall(p.allReduce(kS, grad(0), kLayerFloats));
  s.onCall(p.allReduce(kS, grad(1), kLayerFloats));
  s.onCall(p.kernel(kS, {grad(1)}));
  const Lines expected = {"record 0 on s1", "record 1 on s1", "agree", "fallback unplanned_group at 1",
                          "held 1 on s1", "record 17 on s1", "held 2 on s1", "record 18 on s1",
                          "call 3", "record 19 on s1"};
  EXPECT_EQ(log.lines, expected);
  EXPECT_EQ(s.stats().unplanned_groups, 1u);
  EXPECT_TRUE(s.active());
}

TEST(Scheduler, DisagreementDisablesThePlanOnEveryCallAfter) {
  CallProgram p;
  const Call a0 = p.allReduce(kS, grad(0), kLayerFloats);
  const Call a1 = p.allReduce(kS, grad(1), kLayerFloats);
  ScheduleRules rules;
  rules.groups.push_back(planOf({a0, a1}, {0}, {1}, {{0, 0}}));
  ActionLog log;
  log.agree_result = false;
  Scheduler s(rules, log, smallLimits());
  s.onCall(a0);
  s.onCall(a1);
  s.onCall(p.kernel(kS, {grad(0)}));
  s.onCall(p.allReduce(kS, grad(0), kLayerFloats));  // from now on: exactly the application's calls
  s.onCall(p.kernel(kS, {grad(0)}));
  const Lines expected = {"record 0 on s1", "record 1 on s1", "disagree", "fallback ranks_disagree at 1",
                          "held 1 on s1", "record 17 on s1", "held 2 on s1", "record 18 on s1",
                          "call 3", "call 4", "call 5"};
  EXPECT_EQ(log.lines, expected);
  EXPECT_FALSE(s.active());
  EXPECT_TRUE(s.stats().disabled);
}

TEST(Scheduler, UnknownParameterLayoutWaitsForEverythingInFlight) {
  OnePlannedAllReduce planned;
  auto& [p, ar, rules, log, s] = planned;
  s.onCall(ar);
  s.onCall(p.kernel(kS, {kParams}));   // unrelated: the all-reduce stays held
  s.onCall(p.unknownKernel(kC));       // may touch anything: flush, wait, original order
  s.onCall(p.kernel(kS, {grad(0)}));
  const Lines expected = {"record 0 on s1", "call 2", "agree", "wait comm 0", "unit 1 [0+256] contiguous on comm",
                          "record 8 on comm", "fallback unknown_parameter_layout at 3", "wait s2 8", "call 3",
                          "wait s1 8", "call 4", "record 17 on s1"};
  EXPECT_EQ(log.lines, expected);
}

TEST(Scheduler, ProducerBeforeAnUnknownOpIsNotTrusted) {
  OnePlannedAllReduce planned;
  auto& [p, ar, rules, log, s] = planned;
  s.onCall(ar);
  s.onCall(p.of(CallKind::DeviceSync));
  s.onCall(p.kernel(kS, {grad(0)}));        // producer of the next all-reduce...
  s.onCall(p.of(CallKind::Barrier, kC));     // ...but something unknown ran on C after it
  const std::size_t mark = log.lines.size();
  s.onCall(p.allReduce(kS, grad(0), kLayerFloats));
  s.onCall(p.of(CallKind::DeviceSync));
  const Lines expected = {"record 0 on s1", "flush", "wait comm 0", "unit 5 [0+256] contiguous on comm",
                          "record 9 on comm", "call 6"};
  EXPECT_EQ(log.since(mark), expected);
  EXPECT_EQ(s.stats().producer_waits, 0u);
}

TEST(Scheduler, GraphCaptureDrainsAndPassesEverythingThrough) {
  OnePlannedAllReduce planned;
  auto& [p, ar, rules, log, s] = planned;
  s.onCall(ar);
  s.onCall(p.of(CallKind::CaptureBegin, kC));
  s.onCall(p.allReduce(kC, grad(0), kLayerFloats));  // captured: not held
  s.onCall(p.kernel(kC, {grad(0)}));
  s.onCall(p.of(CallKind::CaptureEnd, kC));
  s.onCall(p.allReduce(kS, grad(0), kLayerFloats));   // held again after the capture
  const Lines expected = {"record 0 on s1", "agree", "wait comm 0", "unit 1 [0+256] contiguous on comm",
                          "record 8 on comm", "wait s1 8", "fallback graph_capture at 2", "call 2",
                          "call 3", "call 4", "call 5", "record 0 on s1"};
  EXPECT_EQ(log.lines, expected);
  EXPECT_TRUE(s.active());
}

TEST(Scheduler, SendAndReceiveBuffersThatPartlyOverlapDisableThePlan) {
  CallProgram p;
  ScheduleRules rules;
  ActionLog log;
  Scheduler s(rules, log, smallLimits());
  s.onCall(p.allReduce(kS, grad(0), kLayerFloats));
  // Out of place, the receive buffer starting halfway into the send buffer: no NCCL call means
  // that, so nothing about it can be proven.
  s.onCall(p.allReduce(kS, grad(2), 2 * kLayerFloats, grad(3)));
  const Lines expected = {"record 0 on s1", "fallback overlapping_buffer at 2", "held 1 on s1",
                          "record 17 on s1", "call 2"};
  EXPECT_EQ(log.lines, expected);
  EXPECT_FALSE(s.active());
}

// FSDP frees each layer's gathered parameters and an allocator hands the memory out again with
// another extent: the buffers the new one meets become one with it (their union), after what
// was held there is issued, and whatever touches any of that memory still waits for the
// collectives in flight there.
TEST(Scheduler, ABufferHandedOutAgainWithAnotherExtentIsMergedWithWhatItMeets) {
  CallProgram p;
  const Call small = p.allGather(kS, grad(0), kLayerFloats / 8, grad(0));  // [grad(0), +512 bytes)
  const Call large = p.allGather(kS, grad(0), kLayerFloats / 4, grad(0));  // [grad(0), +1024 bytes)
  ScheduleRules rules;
  rules.groups.push_back(planOf({small}, {0}, {1}, {{0, 0}}));
  rules.groups.push_back(planOf({large}, {0}, {1}, {{0, 0}}));
  std::sort(rules.groups.begin(), rules.groups.end(),
            [](const GroupPlan& a, const GroupPlan& b) { return a.signature < b.signature; });
  ActionLog log;
  Scheduler s(rules, log, smallLimits());
  s.onCall(small);
  s.onCall(large);                                    // meets the first one's buffer
  s.onCall(p.kernel(kC, {grad(0) + kLayerBytes / 2}));  // only the larger buffer held this
  s.onCall(p.kernel(kC, {grad(0)}));
  const Lines expected = {
      "record 0 on s1",                                                                // held
      "agree", "wait comm 0", "unit 1 [0+32] contiguous on comm", "record 8 on comm",  // issued first
      "record 0 on s1",  // the union's producer is unproven: the position
      "flush", "wait comm 0", "unit 2 [0+64] contiguous on comm", "record 9 on comm",
      "wait s2 9", "call 3", "record 17 on s2",  // waits for the gather (and the one before)
      "call 4", "record 18 on s2"};
  EXPECT_EQ(log.lines, expected);
  EXPECT_TRUE(s.active());
  EXPECT_EQ(s.stats().buffers_merged, 1u);
  EXPECT_EQ(s.stats().planned_groups, 2u);
}

TEST(Scheduler, FusedBucketsSplitPartsAndGroupWaits) {
  CallProgram p;
  // Three members: two contiguous in one bucket split in two, one apart (not contiguous with
  // the bucket it shares).
  const Call a0 = p.allReduce(kS, grad(0), kLayerFloats);
  const Call a1 = p.allReduce(kS, grad(1), kLayerFloats);
  const Call a2 = p.allReduce(kS, grad(3), kLayerFloats);
  ScheduleRules rules;
  rules.per_bucket_waits = false;
  rules.groups.push_back(planOf({a0, a1, a2}, {0, 2}, {2, 1}, {{0, 1}, {1, 0}, {0, 0}}));
  ActionLog log;
  Scheduler s(rules, log, smallLimits());
  s.onCall(a0);
  s.onCall(a1);
  s.onCall(a2);
  s.onCall(p.kernel(kS, {grad(3)}));  // its bucket is issued second, but it waits for the group
  const Lines expected = {"record 0 on s1", "record 1 on s1", "record 2 on s1", "agree",
                          "wait comm 1", "unit 1,2 [256+256] contiguous on comm", "record 8 on comm",
                          "wait comm 2", "unit 3 [0+256] contiguous on comm", "record 9 on comm",
                          "wait comm 0", "unit 1,2 [0+256] contiguous on comm", "record 10 on comm",
                          "wait s1 10", "call 4", "record 17 on s1"};
  EXPECT_EQ(log.lines, expected);
}

TEST(Scheduler, NonContiguousBucketIsCopied) {
  CallProgram p;
  const Call a0 = p.allReduce(kS, grad(0), kLayerFloats);
  const Call a1 = p.allReduce(kS, grad(2), kLayerFloats);
  ScheduleRules rules;
  rules.groups.push_back(planOf({a0, a1}, {0}, {1}, {{0, 0}}));
  ActionLog log;
  Scheduler s(rules, log, smallLimits());
  s.onCall(a0);
  s.onCall(a1);
  s.onCall(p.of(CallKind::DeviceSync));
  ASSERT_EQ(log.units.size(), 1u);
  EXPECT_FALSE(log.units[0].contiguous);
  EXPECT_EQ(log.units[0].count, 2 * kLayerFloats);
}

TEST(Scheduler, WithoutCommunicationStreamBucketsWaitForTheirPositions) {
  CallProgram p;
  const Call a0 = p.allReduce(kS, grad(0), kLayerFloats);
  const Call a1 = p.allReduce(kS, grad(1), kLayerFloats);
  ScheduleRules rules;
  rules.communication_stream = false;
  rules.groups.push_back(planOf({a0, a1}, {0}, {1}, {{0, 0}}));
  ActionLog log;
  Scheduler s(rules, log, smallLimits());
  s.onCall(a0);
  s.onCall(a1);
  s.onCall(p.kernel(kS, {grad(0)}));
  s.onCall(p.kernel(kC, {grad(1)}));
  // Fused, on the communication stream, but after everything before the calls: no producer waits.
  const Lines expected = {"record 0 on s1", "record 1 on s1", "agree", "wait comm 0", "wait comm 1",
                          "unit 1,2 [0+512] contiguous on comm", "record 8 on comm", "wait s1 8", "call 3",
                          "record 17 on s1", "wait s2 8", "call 4", "record 18 on s2"};
  EXPECT_EQ(log.lines, expected);
}

// One iteration of a ZeRO-1 step of two buckets on stream S, as Megatron's distributed
// optimizer lays it out: gradients and parameters are views of flat buckets; each gradient
// bucket is reduce-scattered in place (this rank, 1 of 4, keeps the second quarter), the
// sharded update reads the gradient shards and writes the parameter shards, each parameter
// bucket is all-gathered in place, and the next forward reads bucket 1's layer first.
struct ShardedStep {
  static constexpr std::uint64_t kShard = 64;                 // floats per rank and bucket
  static constexpr std::uint64_t kBucketBytes = 4 * kShard * 4;
  static std::uint64_t gradBucket(int b) { return kGrads + static_cast<std::uint64_t>(b) * kBucketBytes; }
  static std::uint64_t paramBucket(int b) { return kParams + static_cast<std::uint64_t>(b) * kBucketBytes; }
  static std::uint64_t mine(std::uint64_t bucket) { return bucket + kShard * 4; }

  explicit ShardedStep(CallProgram& program) : p(program) {}
  CallProgram& p;
  std::vector<Call> calls, scatters, gathers;
  void build() {
    calls.push_back(p.kernel(kS, {gradBucket(1) + 8, kActs}));  // backward, last layers first
    calls.push_back(p.kernel(kS, {gradBucket(0) + 8, kActs}));
    for (int b : {1, 0}) {
      scatters.push_back(p.reduceScatter(kS, gradBucket(b), kShard, mine(gradBucket(b))));
      calls.push_back(scatters.back());
    }
    calls.push_back(p.kernel(kS, {mine(gradBucket(0)), mine(gradBucket(1)), mine(paramBucket(0)), mine(paramBucket(1))}));
    for (int b : {1, 0}) {
      gathers.push_back(p.allGather(kS, mine(paramBucket(b)), kShard, paramBucket(b)));
      calls.push_back(gathers.back());
    }
    calls.push_back(p.kernel(kS, {paramBucket(0) + 8, kActs}));  // the next forward: first layers first
    calls.push_back(p.kernel(kS, {paramBucket(1) + 8, kActs}));
  }
};

TEST(Scheduler, ReduceScattersAndAllGathersAreHeldEachABucketOfItsOwn) {
  CallProgram p;
  ShardedStep first(p), second(p);
  first.build();
  second.build();
  ScheduleRules rules;
  // Ready order for the reduce-scatters; the all-gathers in the order the next forward needs them.
  rules.groups.push_back(planOf(first.scatters, {0, 1}, {1, 1}, {{0, 0}, {1, 0}}));
  rules.groups.push_back(planOf(first.gathers, {0, 1}, {1, 1}, {{1, 0}, {0, 0}}));
  std::sort(rules.groups.begin(), rules.groups.end(),
            [](const GroupPlan& a, const GroupPlan& b) { return a.signature < b.signature; });
  ActionLog log;
  Scheduler s(rules, log, smallLimits());
  for (const Call& c : first.calls) s.onCall(c);
  const std::size_t mark = log.lines.size();
  for (const Call& c : second.calls) s.onCall(c);
  const Lines expected_second = {
      // Backward's kernels now touch the gradient buckets (in place, each one buffer); the
      // forward before them already waited for every unit of the last step.
      "call 10", "record 20 on s1",
      "call 11", "record 21 on s1",
      // Both reduce-scatters held: their producers are proven, no positions recorded.
      "flush",  // the update reads both shards: the group goes, in the program's order (no agreement)
      "wait comm 20", "unit 12 [0+64] contiguous on comm", "record 12 on comm",  // after call 10 only
      "wait comm 21", "unit 13 [0+64] contiguous on comm", "record 13 on comm",
      "wait s1 13", "call 14", "record 22 on s1",
      "agree",  // the forward's first kernel reads parameter bucket 0: the all-gathers go
      "wait comm 22", "unit 16 [0+64] contiguous on comm", "record 14 on comm",  // bucket 0's first
      "unit 15 [0+64] contiguous on comm", "record 15 on comm",
      "wait s1 14", "call 17", "record 23 on s1",  // waits for its own bucket's all-gather only
      "wait s1 15", "call 18", "record 24 on s1"};
  EXPECT_EQ(log.since(mark), expected_second);
  EXPECT_EQ(s.stats().planned_groups, 4u);
  EXPECT_EQ(s.stats().unplanned_groups, 0u);
  EXPECT_EQ(s.stats().fallbacks[static_cast<std::size_t>(Fallback::OverlappingBuffer)], 0u);
  EXPECT_TRUE(s.active());
  // Each unit is the application's own call, whole: its type, buffers and count.
  ASSERT_EQ(log.unit_members.size(), 8u);
  const CollectiveArgs& gathered = log.unit_members[6].front().args;
  EXPECT_EQ(gathered.type, trace::CollType::AllGather);
  EXPECT_EQ(gathered.send, ShardedStep::mine(ShardedStep::paramBucket(0)));
  EXPECT_EQ(gathered.recv, ShardedStep::paramBucket(0));
  EXPECT_EQ(log.units[6].count, ShardedStep::kShard);
}

// A store keeps no operation for an all-gather (it reads back as unknown) where the live call
// says none: the recorded group and the live one must have one signature.
TEST(GroupSignature, AnAllGatherHasNoOperationToTellApart) {
  CallProgram p;
  Call recorded = p.allGather(kS, grad(0), kLayerFloats, grad(1));
  Call live = recorded;
  recorded.collective.op = trace::RedOp::Unknown;
  GroupSignature a, b;
  a.add(recorded.collective);
  b.add(live.collective);
  EXPECT_EQ(a.value(), b.value());
  Call sum = p.allReduce(kS, grad(0), kLayerFloats), avg = sum;
  avg.collective.op = trace::RedOp::Avg;
  GroupSignature c, d;
  c.add(sum.collective);
  d.add(avg.collective);
  EXPECT_NE(c.value(), d.value());
}

// A bucket of both reduce-scatters is one unit through the fusion buffer (never in place: their
// per-rank slices interleave), of both members' counts per rank.
TEST(Scheduler, FusedReduceScattersAreOneUnitThroughTheFusionBuffer) {
  CallProgram p;
  ShardedStep step(p);
  step.build();
  ScheduleRules rules;
  rules.groups.push_back(planOf(step.scatters, {0}, {1}, {{0, 0}}));
  ActionLog log;
  Scheduler s(rules, log, smallLimits());
  for (std::size_t i = 0; i < 5; ++i) s.onCall(step.calls[i]);
  EXPECT_EQ(s.stats().planned_groups, 1u);
  EXPECT_EQ(s.stats().unplanned_groups, 0u);
  // Each reduce-scatter waits for its own producer (the backward kernel of its bucket), then the
  // update waits for the one unit.
  const Lines expected = {"call 1", "call 2", "record 0 on s1", "record 1 on s1", "agree", "wait comm 0", "wait comm 1",
                          "unit 3,4 [0+128] copied on comm", "record 8 on comm", "wait s1 8", "call 5",
                          "record 17 on s1"};
  EXPECT_EQ(log.lines, expected);
  ASSERT_EQ(log.unit_members.size(), 1u);
  EXPECT_EQ(log.unit_members[0].size(), 2u);
  EXPECT_FALSE(log.units[0].contiguous);
  EXPECT_EQ(log.units[0].count, 2 * ShardedStep::kShard);
}

// A part of a reduce-scatter would take a range of every rank's slice at once: no single call
// does that, so a plan that splits one keeps the group in its original order, on its own stream.
TEST(Scheduler, APlanThatSplitsAReduceScatterIsNotApplied) {
  CallProgram p;
  ShardedStep step(p);
  step.build();
  ScheduleRules rules;
  rules.groups.push_back(planOf(step.scatters, {0, 1}, {2, 1}, {{0, 0}, {0, 1}, {1, 0}}));
  ActionLog log;
  Scheduler s(rules, log, smallLimits());
  for (std::size_t i = 0; i < 5; ++i) s.onCall(step.calls[i]);
  EXPECT_EQ(s.stats().planned_groups, 0u);
  EXPECT_EQ(s.stats().unplanned_groups, 1u);
  EXPECT_EQ(std::count(log.lines.begin(), log.lines.end(), "held 3 on s1"), 1);
  EXPECT_EQ(std::count(log.lines.begin(), log.lines.end(), "held 4 on s1"), 1);
  EXPECT_TRUE(log.units.empty());
}

// Two ranks whose calls group differently (a host sync on another thread fell between two
// all-reduces on one of them) issue those groups unreordered without agreeing; at the next
// group their plans reorder, the digests cover every earlier group, and they disagree before
// anything is reordered.
TEST(Scheduler, RanksWhoseGroupsDifferedWithoutAgreeingDisagreeBeforeTheFirstReorder) {
  CallProgram p;
  const Call a0 = p.allReduce(kS, grad(0), kLayerFloats), a1 = p.allReduce(kS, grad(1), kLayerFloats);
  // Other sizes, so that each group has a signature of its own.
  const Call b0 = p.allReduce(kS, grad(2), kLayerFloats / 2), b1 = p.allReduce(kS, grad(3), kLayerFloats / 2);
  const Call start = p.allReduce(kS, grad(4), kLayerFloats / 4);
  ScheduleRules rules;
  rules.groups.push_back(planOf({start}, {0}, {1}, {{0, 0}}));
  rules.groups.push_back(planOf({a0, a1}, {0, 1}, {1, 1}, {{0, 0}, {1, 0}}));
  rules.groups.push_back(planOf({a0}, {0}, {1}, {{0, 0}}));
  rules.groups.push_back(planOf({b0, b1}, {0, 1}, {1, 1}, {{1, 0}, {0, 0}}));  // reversed
  std::sort(rules.groups.begin(), rules.groups.end(),
            [](const GroupPlan& a, const GroupPlan& b) { return a.signature < b.signature; });
  ActionLog together, apart;
  Scheduler one(rules, together, smallLimits()), other(rules, apart, smallLimits());
  for (Scheduler* s : {&one, &other}) {
    s->onCall(start);
    s->onCall(p.of(CallKind::DeviceSync));  // the first flush: both agree
  }
  one.onCall(a0);
  one.onCall(a1);
  one.onCall(p.of(CallKind::DeviceSync));  // {a0, a1}
  other.onCall(a0);
  other.onCall(p.of(CallKind::DeviceSync));  // {a0}
  other.onCall(a1);
  other.onCall(p.of(CallKind::DeviceSync));  // {a1}
  for (Scheduler* s : {&one, &other}) {
    s->onCall(b0);
    s->onCall(b1);
    s->onCall(p.of(CallKind::DeviceSync));  // {b0, b1}, reversed: agree
  }
  ASSERT_EQ(together.digests.size(), 2u);
  ASSERT_EQ(apart.digests.size(), 2u);
  EXPECT_EQ(together.digests[0], apart.digests[0]);
  EXPECT_NE(together.digests[1], apart.digests[1]);
  EXPECT_EQ(std::count(together.lines.begin(), together.lines.end(), "flush"), 1);
  EXPECT_EQ(std::count(apart.lines.begin(), apart.lines.end(), "flush"), 2);
}

// A group the plan keeps in place (a side stream's collectives on another communicator, which
// would queue with the others on the communication stream) is issued as the program called it,
// on its own stream, with no agreement and no fallback.
TEST(Scheduler, AGroupThePlanKeepsInPlaceIsIssuedAsCalled) {
  CallProgram p;
  const Call first = p.allReduce(kS, grad(0), kLayerFloats);
  Call kept = p.allGather(kC, grad(2), kLayerFloats / 4, grad(3));
  kept.collective.comm_index = 1;
  ScheduleRules rules;
  rules.groups.push_back(planOf({first}, {0}, {1}, {{0, 0}}));
  GroupPlan keep = planOf({kept}, {0}, {1}, {{0, 0}});
  keep.keep = true;
  rules.groups.push_back(keep);
  std::sort(rules.groups.begin(), rules.groups.end(),
            [](const GroupPlan& a, const GroupPlan& b) { return a.signature < b.signature; });
  ActionLog log;
  Scheduler s(rules, log, smallLimits());
  s.onCall(first);
  s.onCall(p.of(CallKind::DeviceSync));
  const std::size_t mark = log.lines.size();
  s.onCall(kept);
  s.onCall(p.kernel(kC, {grad(3)}));
  const Lines expected = {"record 0 on s2", "flush", "held 2 on s2", "record 17 on s2", "call 4", "record 18 on s2"};
  EXPECT_EQ(log.since(mark), expected);
  EXPECT_EQ(s.stats().kept_groups, 1u);
  EXPECT_EQ(s.stats().planned_groups, 1u);
  EXPECT_TRUE(log.fallbacks.empty());
}

TEST(Scheduler, OtherCollectivesAndNcclGroupsKeepTheirPlace) {
  OnePlannedAllReduce planned;
  auto& [p, ar, rules, log, s] = planned;
  s.onCall(ar);
  s.onCall(p.broadcast(kS, kParams, 16));  // flushes the held all-reduce first
  s.onCall(p.of(CallKind::GroupBegin));
  s.onCall(p.allReduce(kS, grad(0), kLayerFloats));  // inside a group: not held, waits for its buffer
  s.onCall(p.of(CallKind::GroupEnd));
  const Lines expected = {"record 0 on s1", "agree", "wait comm 0", "unit 1 [0+256] contiguous on comm",
                          "record 8 on comm", "call 2", "call 3", "fallback nccl_group at 4", "wait s1 8",
                          "call 4", "record 17 on s1", "call 5"};
  EXPECT_EQ(log.lines, expected);
}

TEST(Scheduler, CapacityOfHeldCollectivesForcesAFlush) {
  CallProgram p;
  SchedulerLimits limits = smallLimits();
  limits.held = 2;
  ScheduleRules rules;
  ActionLog log;
  Scheduler s(rules, log, limits);
  s.onCall(p.allReduce(kS, grad(0), kLayerFloats));
  s.onCall(p.allReduce(kS, grad(1), kLayerFloats));  // the table is full: flush now
  EXPECT_EQ(s.stats().unplanned_groups, 1u);
  EXPECT_EQ(std::count(log.lines.begin(), log.lines.end(), "agree"), 1);
}

// Invariant 3: a call whose effect cannot be followed on the whole device (cudaMemcpyPeer, an
// unknown API) flushes, then the host waits for everything in flight before the call is made.
// What the host has waited for needs no wait afterwards.
TEST(Scheduler, DeviceWideUnknownCallsMakeTheHostWaitForEverythingInFlight) {
  OnePlannedAllReduce planned;
  auto& [p, ar, rules, log, s] = planned;
  s.onCall(ar);
  s.onCall(p.of(CallKind::Barrier));
  s.onCall(p.kernel(kC, {grad(0)}));
  const Lines expected = {"record 0 on s1", "agree", "wait comm 0", "unit 1 [0+256] contiguous on comm",
                          "record 8 on comm", "fallback unknown_api at 2", "host wait 8", "call 2", "call 3",
                          "record 17 on s2"};
  EXPECT_EQ(log.lines, expected);
  EXPECT_TRUE(s.active());
}

// Invariant 3: CUDA orders an op on the legacy default stream after the work of every blocking
// stream. A collective the program issued on a blocking stream and the runtime redirected to its
// non-blocking one would escape that order, so the legacy op waits for the redirected units on
// the GPU (the host does not wait); the stream that then uses the result waits as always.
TEST(Scheduler, ALegacyStreamOpWaitsForCollectivesRedirectedFromBlockingStreams) {
  OnePlannedAllReduce planned(/*blocking=*/true);
  auto& [p, ar, rules, log, s] = planned;
  s.onCall(ar);
  s.onCall(p.memcpy(kLegacyStream, kHost, kActs, 64));
  s.onCall(p.kernel(kC, {grad(0)}));
  const Lines expected = {"record 0 on s1", "agree", "wait comm 0", "unit 1 [0+256] contiguous on comm",
                          "record 8 on comm", "fallback legacy_stream at 2", "wait s0 8", "call 2", "wait s2 8",
                          "call 3", "record 17 on s2"};
  EXPECT_EQ(log.lines, expected);
  EXPECT_TRUE(s.active());
}

// Invariant 3: collectives from non-blocking streams (PyTorch's) never synchronised with the
// legacy stream, so the legacy stream is an ordinary one: its ops neither flush what is held nor
// wait, and what they touch orders them as on any stream.
TEST(Scheduler, TheLegacyStreamIsAnOrdinaryStreamBesideNonBlockingCollectiveStreams) {
  OnePlannedAllReduce planned(/*blocking=*/false);
  auto& [p, ar, rules, log, s] = planned;
  s.onCall(ar);
  s.onCall(p.kernel(kLegacyStream, {kActs}));
  s.onCall(p.kernel(kLegacyStream, {grad(0)}));
  // The first kernel goes straight on while the all-reduce is held; the second, which reads its
  // buffer, has it issued first and waits for it on the GPU. No fallback, no host wait.
  const Lines expected = {"record 0 on s1", "call 2", "agree", "wait comm 0", "unit 1 [0+256] contiguous on comm",
                          "record 8 on comm", "wait s0 8", "call 3", "record 17 on s0"};
  EXPECT_EQ(log.lines, expected);
  EXPECT_EQ(s.stats().barrier_launches, 0u);
  EXPECT_TRUE(s.active());
}

// A synchronize of the legacy stream covers the blocking streams' work, not the non-blocking
// ones': PyTorch's loss.item() on its compute stream does not wait for the all-reduces on its
// NCCL streams, and neither does the host under a plan. Where the collectives came from a blocking
// stream, the host still waits for every unit redirected from it.
TEST(Scheduler, ALegacyStreamSyncWaitsOnlyForTheWorkItCovers) {
  for (const bool blocking : {false, true}) {
    SCOPED_TRACE(blocking ? "collectives on a blocking stream" : "collectives on a non-blocking stream");
    OnePlannedAllReduce planned(blocking);
    auto& [p, ar, rules, log, s] = planned;
    s.onCall(ar);
    s.onCall(p.kernel(kS, {kActs}));
    s.onCall(p.of(CallKind::StreamSync, kLegacyStream));
    const Lines non_blocking = {"record 0 on s1", "call 2", "agree", "wait comm 0", "unit 1 [0+256] contiguous on comm",
                                "record 8 on comm", "call 3"};
    const Lines expected = blocking ? Lines{"record 0 on s1", "call 2", "agree", "wait comm 0",
                                            "unit 1 [0+256] contiguous on comm", "record 8 on comm", "call 3",
                                            "host wait 8"}
                                    : non_blocking;
    EXPECT_EQ(log.lines, expected);
    EXPECT_TRUE(s.active());
  }
}

// Invariant 3: a table that overflows (buffers, application events, streams) disables the plan:
// what is held is issued in its original order and every call from there is the application's.
TEST(Scheduler, OverflowingATableDisablesThePlanInTheOriginalOrder) {
  {
    CallProgram p;
    SchedulerLimits limits = smallLimits();
    limits.tensors = 1;
    ActionLog log;
    Scheduler s(kDefaultRules, log, limits);
    s.onCall(p.allReduce(kS, grad(0), kLayerFloats));
    s.onCall(p.allReduce(kS, grad(1), kLayerFloats));  // a second buffer: no room
    s.onCall(p.kernel(kS, {grad(0)}));
    const Lines expected = {"record 0 on s1", "fallback capacity_exceeded at 2", "held 1 on s1", "record 17 on s1",
                            "call 2", "call 3"};
    EXPECT_EQ(log.lines, expected);
    EXPECT_FALSE(s.active());
  }
  {
    CallProgram p;
    SchedulerLimits limits = smallLimits();
    limits.app_events = 1;
    ActionLog log;
    Scheduler s(kDefaultRules, log, limits);
    s.onCall(p.record(kS, kOptDone));
    s.onCall(p.record(kS, kCheckDone));  // a second event: no room
    s.onCall(p.allReduce(kS, grad(0), kLayerFloats));
    const Lines expected = {"call 1", "fallback capacity_exceeded at 2", "call 2", "call 3"};
    EXPECT_EQ(log.lines, expected);
    EXPECT_FALSE(s.active());
  }
  {
    CallProgram p;
    ActionLog log;
    Scheduler s(kDefaultRules, log, smallLimits());  // 8 streams: the runtime's two and 6 more
    for (StreamHandle h = 1; h <= 7; ++h) s.onCall(p.kernel(h, {kActs}));
    const Lines expected = {"call 1", "call 2", "call 3", "call 4", "call 5", "call 6",
                            "fallback capacity_exceeded at 7", "call 7"};
    EXPECT_EQ(log.lines, expected);
    EXPECT_FALSE(s.active());
  }
}

// The runtime creates one CUDA event per slot when it starts (docs/tuner.md gives the count);
// when it cannot, the plan is never applied.
TEST(Scheduler, EventSlotsAreCreatedOnceAndTheirFailureDisablesThePlan) {
  {
    ActionLog log;
    Scheduler s(kDefaultRules, log);
    const SchedulerLimits defaults;
    EXPECT_EQ(log.event_slots, defaults.held + defaults.units + defaults.touch_events + 1);
    EXPECT_EQ(log.event_slots, 3585u);
    EXPECT_TRUE(s.active());
  }
  {
    CallProgram p;
    ActionLog log;
    log.events_available = false;
    Scheduler s(kDefaultRules, log, smallLimits());
    s.onCall(p.allReduce(kS, grad(0), kLayerFloats));
    const Lines expected = {"fallback capacity_exceeded at 0", "call 1"};
    EXPECT_EQ(log.lines, expected);
    EXPECT_FALSE(s.active());
  }
}

// Invariant 1: the decisions depend on the plan and the call sequence only. Two ranks make the
// same calls with their own addresses, streams and events (as real ranks do): their buckets,
// parts, issue order and agreement digests are the same.
TEST(Scheduler, DecisionsDependOnlyOnTheCallSequence) {
  struct Rank {
    std::vector<std::vector<std::uint32_t>> units;  // members' call ids per unit, with the element range
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    std::vector<std::uint64_t> digests;
  };
  auto runRank = [](std::uint64_t address_offset, StreamHandle stream, std::uint64_t event) {
    CallProgram p;
    std::vector<Call> calls;
    const std::uint64_t base = kGrads + address_offset;
    auto g = [&](int l) { return base + static_cast<std::uint64_t>(l) * kLayerBytes; };
    std::vector<Call> members;
    for (int it = 0; it < 3; ++it) {
      calls.push_back(p.memset(stream, base, 4 * kLayerBytes));
      for (int l = 3; l >= 0; --l) calls.push_back(p.kernel(stream, {g(l)}));
      for (int l = 0; l < 4; ++l) {
        calls.push_back(p.allReduce(stream, g(l), kLayerFloats));
        if (it == 0) members.push_back(calls.back());
      }
      for (int l = 0; l < 4; ++l) calls.push_back(p.kernel(stream, {g(l)}));
      calls.push_back(p.record(stream, event));
      calls.push_back(p.eventSync(event));
    }
    ScheduleRules rules;
    rules.plan_checksum = 7;
    rules.groups.push_back(planOf(members, {0, 2}, {1, 2}, {{1, 1}, {1, 0}, {0, 0}}));
    ActionLog log;
    Scheduler s(rules, log, smallLimits());
    for (const Call& c : calls) s.onCall(c);
    Rank r;
    for (std::size_t i = 0; i < log.units.size(); ++i) {
      std::vector<std::uint32_t> ids;
      for (const HeldCollective& m : log.unit_members[i]) ids.push_back(m.call_id);
      r.units.push_back(ids);
      r.ranges.emplace_back(log.units[i].offset, log.units[i].count);
    }
    r.digests = log.digests;
    return r;
  };
  const Rank a = runRank(0, 1, 0xE1);
  const Rank b = runRank(0x7000000, 0x55, 0xF9);
  ASSERT_EQ(a.units.size(), 9u);  // three iterations of three units
  EXPECT_EQ(a.units, b.units);
  EXPECT_EQ(a.ranges, b.ranges);
  EXPECT_EQ(a.digests, b.digests);
}

TEST(Scheduler, GroupPlanValidation) {
  GroupPlan g;
  g.members = 3;
  g.bucket_first = {0, 2};
  g.parts = {1, 2};
  g.order = {{0, 0}, {1, 1}, {1, 0}};
  EXPECT_EQ(validateGroupPlan(g), "");
  g.order = {{0, 0}, {1, 1}, {1, 1}};
  EXPECT_NE(validateGroupPlan(g), "");
  g.order = {{0, 0}, {1, 1}, {1, 0}};
  g.bucket_first = {0, 3};
  EXPECT_NE(validateGroupPlan(g), "");
}

}  // namespace
}  // namespace syncopate::tuner

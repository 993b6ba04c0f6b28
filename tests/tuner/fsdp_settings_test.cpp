// PyTorch FSDP's settings read from a rank's calls, and the calls written for other values
// (tuner/include/syncopate/tuner/fsdp_settings.hpp): a run recorded with one value of each
// setting, written for another, is the run recorded with that one, call for call.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <tuple>
#include <vector>

#include "call_program.hpp"
#include "recorded_rank_builder.hpp"
#include "syncopate/tuner/fsdp_settings.hpp"

namespace syncopate::tuner::fsdp_settings_test {

using testing::CallProgram;

constexpr StreamHandle kCompute = 0xC0, kUnshard = 0xC1, kPostBackward = 0xC2;
constexpr std::uint64_t kShards = 0x10000000, kGathered = 0x40000000, kGrads = 0x80000000, kGradShards = 0xB0000000;
constexpr std::uint64_t kUnitStride = 0x1000000;
constexpr std::uint64_t kComputeIssued = 0xE1, kUnshardIssued = 0xE2, kReduceIssued = 0xE3, kFreeings = 0xF00;
constexpr std::uint64_t kShardCount = 1 << 16;
constexpr analyzer::Index kForwardThread = 0, kBackwardThread = 1;

// One rank of FSDP (FULL_SHARD) over `units` units (the root and a unit per block), issuing its
// calls as FSDP's hooks do with `settings`, iteration after iteration: forward on one thread,
// backward on another, the optimizer step after it.
class FsdpRank {
 public:
  FsdpRank(int units, const FsdpSettings& settings, int iterations) : units_(units), s_(settings) {
    gathered_.assign(static_cast<std::size_t>(units), false);
    for (int n = 0; n < iterations; ++n) {
      iteration_ = n;
      thread_ = kForwardThread;
      for (int u = 0; u < units_; ++u) {
        beforeForward(u);
        add(p_.kernel(kCompute, {buffer(kGathered, u)}));
        if (u != 0) reshard(u);
      }
      thread_ = kBackwardThread;
      beforeBackward(0);
      add(p_.kernel(kCompute, {buffer(kGathered, 0)}));  // the loss, the head
      for (int u = units_ - 1; u > 0; --u) {
        beforeBackward(u);
        add(p_.kernel(kCompute, {buffer(kGathered, u), buffer(kGrads, u)}));
        afterBackward(u);
      }
      add(p_.kernel(kCompute, {buffer(kGathered, 0), buffer(kGrads, 0)}));  // the embeddings
      afterBackward(0);
      thread_ = kForwardThread;
      add(p_.kernel(kCompute, {kShards, kGradShards}));  // the optimizer step
    }
    indexIterations(rank_);
  }

  RecordedRun run() const {
    RecordedRun out;
    out.ranks.push_back(rank_);
    return out;
  }

 private:
  static std::uint64_t buffer(std::uint64_t base, int unit) { return base + static_cast<std::uint64_t>(unit) * kUnitStride; }
  int nextInBackward(int unit) const {
    const int next = unit == 0 ? units_ - 1 : unit - 1;
    return next > 0 ? next : -1;
  }

  void add(Call c) {
    RecordedCall& rc = testing::appendRecorded(rank_, c, iteration_, thread_);
    if (c.kind == CallKind::Collective) rc.collective_seq = seq_++;
  }

  void gather(int unit) {
    if (unit < 0 || unit >= units_ || gathered_[static_cast<std::size_t>(unit)]) return;
    if (s_.limit_all_gathers && outstanding_.size() >= 2) {
      add(p_.eventSync(outstanding_.front()));
      spare_.push_back(outstanding_.front());
      outstanding_.pop_front();
    }
    add(p_.allGather(kUnshard, buffer(kShards, unit), kShardCount, buffer(kGathered, unit)));
    gathered_[static_cast<std::size_t>(unit)] = true;
  }
  void reshard(int unit) {
    gathered_[static_cast<std::size_t>(unit)] = false;
    if (!s_.limit_all_gathers) return;
    if (spare_.empty()) spare_.push_back(kFreeings + next_freeing_++);
    add(p_.record(kCompute, spare_.back()));
    outstanding_.push_back(spare_.back());
    spare_.pop_back();
  }
  void waitFor(StreamHandle waiting, StreamHandle issued, std::uint64_t event) {
    add(p_.record(issued, event));
    add(p_.wait(waiting, event));
  }
  void beforeForward(int unit) {
    if (unit == 0) waitFor(kUnshard, kCompute, kComputeIssued);
    gather(unit);
    waitFor(kCompute, kUnshard, kUnshardIssued);
    if (s_.forward_prefetch) gather(unit + 1);
  }
  void beforeBackward(int unit) {
    gather(unit);
    waitFor(kCompute, kUnshard, kUnshardIssued);
    if (s_.backward_prefetch == FsdpBackwardPrefetch::Pre) gather(nextInBackward(unit));
  }
  void afterBackward(int unit) {
    reshard(unit);
    if (s_.backward_prefetch == FsdpBackwardPrefetch::Post && unit != 0) gather(nextInBackward(unit));
    waitFor(kPostBackward, kCompute, kComputeIssued);
    add(p_.reduceScatter(kPostBackward, buffer(kGrads, unit), kShardCount, buffer(kGradShards, unit)));
    if (unit == 0) waitFor(kCompute, kPostBackward, kReduceIssued);
  }

  int units_;
  FsdpSettings s_;
  CallProgram p_;
  RecordedRank rank_;
  std::int64_t iteration_ = 0;
  analyzer::Index thread_ = kForwardThread;
  std::int64_t seq_ = 0;
  std::vector<bool> gathered_;
  std::deque<std::uint64_t> outstanding_;
  std::vector<std::uint64_t> spare_;
  std::uint64_t next_freeing_ = 0;
};

// A host wait for an event the rank never records: what the rewrite leaves in place of a
// recorded limiter wait it moved or removed, which blocks for nothing.
bool vacantWait(const RecordedRank& rank, const RecordedCall& wait) {
  if (wait.call.kind != CallKind::EventSync) return false;
  return std::none_of(rank.calls.begin(), rank.calls.end(), [&](const RecordedCall& rc) {
    return rc.call.kind == CallKind::EventRecord && rc.call.event == wait.call.event;
  });
}

// What a call does, its events and times aside (written calls get events of their own); vacant
// waits left out.
using Shape = std::tuple<CallKind, StreamHandle, trace::CollType, std::uint64_t, analyzer::Index>;
std::vector<Shape> shapes(const RecordedRank& rank) {
  std::vector<Shape> out;
  for (const RecordedCall& rc : rank.calls) {
    if (vacantWait(rank, rc)) continue;
    const bool collective = rc.call.kind == CallKind::Collective;
    out.emplace_back(rc.call.kind, rc.call.stream, collective ? rc.call.collective.type : trace::CollType::Unknown,
                     collective ? rc.call.collective.send : 0, rc.thread);
  }
  return out;
}

std::string text(const Shape& s) {
  return std::string(toString(std::get<0>(s))) + " on stream " + std::to_string(std::get<1>(s)) + " of buffer " +
         std::to_string(std::get<3>(s)) + " by thread " + std::to_string(std::get<4>(s));
}

// The calls alike, or the first that differs.
void expectSameCalls(const std::vector<Shape>& got, const std::vector<Shape>& want) {
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (got[i] != want[i]) {
      ADD_FAILURE() << "call " << i << " is " << text(got[i]) << ", expected " << text(want[i]);
      return;
    }
  }
  EXPECT_EQ(got.size(), want.size());
}

std::string name(const FsdpSettings& s) {
  return std::string("backward_prefetch=") + toString(s.backward_prefetch) +
         " forward_prefetch=" + (s.forward_prefetch ? "True" : "False") +
         " limit_all_gathers=" + (s.limit_all_gathers ? "True" : "False");
}

std::vector<FsdpSettings> everySetting() {
  std::vector<FsdpSettings> out;
  for (FsdpBackwardPrefetch b : {FsdpBackwardPrefetch::Pre, FsdpBackwardPrefetch::Post, FsdpBackwardPrefetch::None}) {
    for (bool forward : {false, true}) {
      for (bool limit : {true, false}) out.push_back({b, forward, limit});
    }
  }
  return out;
}

constexpr int kUnits = 5, kIterations = 3;

TEST(FsdpSettings, ReadsEachValueARunWasRecordedWith) {
  for (const FsdpSettings& s : everySetting()) {
    SCOPED_TRACE(name(s));
    const FsdpRank rank(kUnits, s, kIterations);
    const FsdpRun fsdp = findFsdp(rank.run(), 1);
    ASSERT_TRUE(fsdp.found) << fsdp.why_not;
    EXPECT_EQ(fsdp.unshard, kUnshard);
    EXPECT_EQ(fsdp.compute, kCompute);
    EXPECT_EQ(fsdp.forward_gathers, static_cast<std::size_t>(kUnits));
    EXPECT_EQ(fsdp.backward_gathers, static_cast<std::size_t>(kUnits - 1));  // the root stays gathered
    EXPECT_EQ(fsdp.reduce_scatters, static_cast<std::size_t>(kUnits));
    EXPECT_EQ(fsdp.parameter_bytes, kUnits * 4 * kShardCount * 4);
    EXPECT_EQ(fsdp.recorded.backward_prefetch, s.backward_prefetch);
    EXPECT_EQ(fsdp.recorded.forward_prefetch, s.forward_prefetch);
    EXPECT_EQ(fsdp.recorded.limit_all_gathers, s.limit_all_gathers);
    EXPECT_TRUE(fsdp.forward_prefetch_applies);
  }
}

TEST(FsdpSettings, ARunWrittenForOtherValuesIsTheRunRecordedWithThem) {
  for (const FsdpSettings& from : everySetting()) {
    const FsdpRank recorded(kUnits, from, kIterations);
    const FsdpRun fsdp = findFsdp(recorded.run(), 0);
    ASSERT_TRUE(fsdp.found) << fsdp.why_not;
    for (const FsdpSettings& to : everySetting()) {
      SCOPED_TRACE(name(from) + " written as " + name(to));
      const trace::Result<RecordedRun> written = fsdpSettingsCalls(recorded.run(), 0, kIterations - 1, fsdp, to);
      ASSERT_TRUE(written.ok()) << written.message();
      // Without the limiter, the freeing events a recording with it made stay, and no one waits
      // for them.
      const bool freeings = from.limit_all_gathers || to.limit_all_gathers;
      std::vector<Shape> want = shapes(FsdpRank(kUnits, {to.backward_prefetch, to.forward_prefetch, freeings},
                                                kIterations)
                                           .run()
                                           .ranks[0]);
      if (!to.limit_all_gathers) {
        std::erase_if(want, [](const Shape& s) { return std::get<0>(s) == CallKind::EventSync; });
      }
      expectSameCalls(shapes(written->ranks[0]), want);
      // What it reads of the written run is what it was written for.
      const FsdpRun reread = findFsdp(*written, 1);
      ASSERT_TRUE(reread.found) << reread.why_not;
      EXPECT_EQ(reread.recorded.backward_prefetch, to.backward_prefetch);
      EXPECT_EQ(reread.recorded.forward_prefetch, to.forward_prefetch);
      EXPECT_EQ(reread.recorded.limit_all_gathers, to.limit_all_gathers);
    }
  }
}

// Each all-gather's host wait, written anew, waits for the freeing recorded two freeings before:
// the events it waits for are the records written in place of the recorded ones.
TEST(FsdpSettings, TheLimiterWaitsForTheFreeingTwoBeforeInTheWrittenOrder) {
  const FsdpRank recorded(kUnits, {FsdpBackwardPrefetch::None, false, true}, kIterations);
  const FsdpRun fsdp = findFsdp(recorded.run(), 0);
  ASSERT_TRUE(fsdp.found) << fsdp.why_not;
  const trace::Result<RecordedRun> written =
      fsdpSettingsCalls(recorded.run(), 0, kIterations - 1, fsdp, {FsdpBackwardPrefetch::Pre, true, true});
  ASSERT_TRUE(written.ok()) << written.message();
  std::vector<std::uint64_t> freeings;
  std::size_t waits = 0, vacant = 0, recorded_waits = 0;
  const RecordedRun recorded_run = recorded.run();
  for (const RecordedCall& rc : recorded_run.ranks[0].calls) recorded_waits += rc.call.kind == CallKind::EventSync;
  for (const RecordedCall& rc : written->ranks[0].calls) {
    if (rc.call.kind == CallKind::EventRecord && rc.call.stream == kCompute && rc.call.event >= (1ull << 58)) {
      freeings.push_back(rc.call.event);
    }
    if (vacantWait(written->ranks[0], rc)) {
      ++vacant;
    } else if (rc.call.kind == CallKind::EventSync) {
      ASSERT_LT(waits, freeings.size());
      EXPECT_EQ(rc.call.event, freeings[waits]);
      ASSERT_GE(freeings.size() - waits, 2u);
      ++waits;
    }
  }
  EXPECT_GT(waits, 0u);
  // Each recorded wait left a vacant one at its place, its host time off the CPU's.
  EXPECT_EQ(vacant, recorded_waits);
}

TEST(FsdpSettings, SaysWhyARunIsNotFsdpAsItIssuesIt) {
  // Every all-gather on the compute stream: a hand-written FSDP.
  RecordedRun run;
  RecordedRank& rank = run.ranks.emplace_back();
  CallProgram p;
  const auto add = [&](Call c) {
    RecordedCall rc;
    c.id = static_cast<std::uint32_t>(rank.calls.size());
    rc.call = c;
    rc.iteration = 0;
    rank.calls.push_back(rc);
  };
  add(p.allGather(kCompute, kShards, kShardCount, kGathered));
  add(p.kernel(kCompute, {kGathered}));
  add(p.reduceScatter(kCompute, kGrads, kShardCount, kGradShards));
  indexIterations(rank);
  const FsdpRun fsdp = findFsdp(run, 0);
  EXPECT_FALSE(fsdp.found);
  EXPECT_EQ(fsdp.why_not,
            "the all-gathers are issued on a stream that also runs the model's kernels, not on a stream of their own as "
            "FSDP's unshard stream is: where they are issued there changes nothing FSDP's settings move");
  RecordedRun none;
  none.ranks.emplace_back();
  EXPECT_EQ(findFsdp(none, 0).why_not, "rank 0's step reduce-scatters no gradients");
}

}  // namespace syncopate::tuner::fsdp_settings_test

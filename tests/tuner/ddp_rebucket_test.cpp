// DDP's reducer found in a rank's calls, and the calls written for another bucket cap
// (tuner/include/syncopate/tuner/ddp_rebucket.hpp); and the same from the buckets alone, as for
// a trace (tuner/include/syncopate/tuner/ddp_buckets_by_size.hpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "call_program.hpp"
#include "recorded_rank_builder.hpp"
#include "syncopate/tuner/ddp_buckets_by_size.hpp"
#include "syncopate/tuner/ddp_rebucket.hpp"

namespace syncopate::tuner {
namespace {

using testing::CallProgram;

constexpr StreamHandle kCompute = 0xC0, kNccl = 0xCC;
constexpr std::uint64_t kMiB = 1 << 20;
constexpr std::uint64_t kGrads = 0x10000000, kBuckets = 0x80000000;

// One rank of a DDP job: `iterations` steps of four gradients (1, 2, 2 and 3 MiB, in the order
// backward makes them ready) in the buckets a cap makes, each copied in, the bucket's event,
// wait, all-reduce and done event, then after backward each bucket waited for and copied out.
// That is DDP with a communication hook (Hook::Yes), which copies; without one (Hook::No) each
// gradient is divided into its slot by a kernel instead. With gradient_as_bucket_view
// (Views::On), each gradient's kernel writes its slot in the bucket, divided there in place
// without a hook, and nothing is copied.
enum class Views { Off, On };
enum class Hook { No, Yes };
struct DdpRank {
  std::vector<std::uint64_t> sizes = {1 * kMiB, 2 * kMiB, 2 * kMiB, 3 * kMiB};
  RecordedRank rank;
  CallProgram p;

  void add(Call c, std::int64_t iteration) { testing::appendRecorded(rank, c, iteration, 0); }

  DdpRank(const DdpBucketing& bucketing, int iterations, bool final_waits = true, Views views = Views::Off,
          Hook hook = Hook::Yes) {
    const std::vector<std::size_t> bucket_of = ddpBucketOf(sizes, bucketing);
    const std::size_t buckets = bucket_of.back() + 1;
    std::vector<std::uint64_t> slot(sizes.size());
    std::vector<std::uint64_t> bucket_base(buckets), bucket_bytes(buckets, 0);
    std::uint64_t at = kBuckets;
    for (std::size_t b = 0; b < buckets; ++b) {
      bucket_base[b] = at;
      for (std::size_t g = 0; g < sizes.size(); ++g) {
        if (bucket_of[g] != b) continue;
        slot[g] = at;
        at += sizes[g];
        bucket_bytes[b] += sizes[g];
      }
      at += kMiB;  // buckets apart in memory
    }
    for (int n = 0; n < iterations; ++n) {
      add(p.kernel(kCompute, {kGrads}), n);  // forward
      for (std::size_t g = 0; g < sizes.size(); ++g) {
        const std::uint64_t grad = views == Views::On ? slot[g] : kGrads + g * 8 * kMiB;
        add(p.kernel(kCompute, {kGrads, grad}), n);  // backward of the gradient
        if (hook == Hook::No) {
          add(p.kernel(kCompute, {slot[g], grad}), n);  // divided into its slot
        } else if (views == Views::Off) {
          add(p.memcpy(kCompute, slot[g], grad, sizes[g]), n);
        }
        const std::size_t b = bucket_of[g];
        if (g + 1 == sizes.size() || bucket_of[g + 1] != b) {
          add(p.record(kCompute, 0xE00 + b), n);
          add(p.wait(kNccl, 0xE00 + b), n);
          add(p.allReduce(kNccl, bucket_base[b], bucket_bytes[b] / 4), n);
          add(p.record(kNccl, 0xD00 + b), n);
        }
      }
      for (std::size_t b = 0; b < buckets; ++b) {
        if (final_waits) add(p.wait(kCompute, 0xD00 + b), n);
        for (std::size_t g = 0; g < sizes.size() && views == Views::Off; ++g)
          if (bucket_of[g] == b) add(p.memcpy(kCompute, kGrads + g * 8 * kMiB, slot[g], sizes[g]), n);
      }
      add(p.kernel(kCompute, {kGrads}), n);  // the optimizer
    }
    indexIterations(rank);
  }
};

RecordedRun runOf(const DdpRank& r) {
  RecordedRun run;
  run.ranks.push_back(r.rank);
  return run;
}

std::vector<std::uint64_t> allReduceBytes(const RecordedRank& rank, std::int64_t iteration) {
  std::vector<std::uint64_t> bytes;
  for (const RecordedCall& rc : rank.calls)
    if (rc.iteration == iteration && rc.call.kind == CallKind::Collective) bytes.push_back(rc.call.collective.send_bytes());
  return bytes;
}

// The first bucket closes once it holds its own limit, every later one once it holds the cap.
TEST(DdpBuckets, TheFirstClosesAtItsOwnLimitTheOthersOnceTheyHoldTheCap) {
  const std::vector<std::uint64_t> grads = {kMiB / 2, kMiB / 2, 10 * kMiB, 10 * kMiB, 10 * kMiB, kMiB};
  EXPECT_EQ(ddpBucketOf(grads, DdpBucketing{20 * kMiB, kMiB}), (std::vector<std::size_t>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(ddpBucketOf(grads, DdpBucketing{20 * kMiB, 11 * kMiB}), (std::vector<std::size_t>{0, 0, 0, 1, 1, 2}));
  EXPECT_EQ(ddpBucketOf({kMiB / 4, kMiB / 4, kMiB / 4}, DdpBucketing{kMiB / 4, kMiB / 4}),
            (std::vector<std::size_t>{0, 1, 2}));
}

// As PyTorch's DistributedDataParallel applies them: bucket_cap_mb=N cuts the first bucket at N
// too; only with it unset is the first cut at dist._DEFAULT_FIRST_BUCKET_BYTES, before 25 MiB ones.
TEST(DdpBuckets, AnExplicitCapCutsTheFirstBucketAtTheCapTooTheDefaultAtOneMib) {
  EXPECT_EQ(ddpBucketingForCap(5 * kMiB), (DdpBucketing{5 * kMiB, 5 * kMiB}));
  EXPECT_EQ(ddpDefaultBucketing(), (DdpBucketing{25 * kMiB, kMiB}));
  EXPECT_EQ(ddpDefaultBucketing(4 * kMiB), (DdpBucketing{25 * kMiB, 4 * kMiB}));
}

// The recorded rank's buckets: {1 MiB}, {2, 2}, {3}.
constexpr DdpBucketing kRecorded{3 * kMiB, kMiB};

TEST(DdpBuckets, TheReducerIsFoundWithItsBuckets) {
  const DdpRank r(kRecorded, 3);
  const DdpReducer ddp = findDdpReducer(runOf(r), 1, 2);
  ASSERT_TRUE(ddp.found) << ddp.why_not;
  EXPECT_EQ(ddp.bucket_bytes, (std::vector<std::uint64_t>{kMiB, 4 * kMiB, 3 * kMiB}));
  EXPECT_EQ(ddp.gradient_sizes, r.sizes);
  EXPECT_EQ(ddp.gradient_bytes, 8 * kMiB);
}

TEST(DdpBuckets, WithoutTheWaitBeforeTheCopiesOutItIsNotTheReducer) {
  const DdpRank r(kRecorded, 3, /*final_waits=*/false);
  const DdpReducer ddp = findDdpReducer(runOf(r), 1, 2);
  EXPECT_FALSE(ddp.found);
  EXPECT_NE(ddp.why_not.find("the compute stream never waits for bucket 0's all-reduce after backward"),
            std::string::npos)
      << ddp.why_not;
}

// Another cap: the same copies, in the same order, and the buckets that cap makes, each one's
// all-reduce right after its last copy in, each waited for before its first copy out.
TEST(DdpBuckets, AnotherCapWritesTheCallsThatCapMakes) {
  const DdpRank recorded(kRecorded, 3);
  const RecordedRun run = runOf(recorded);
  const DdpReducer reducer = findDdpReducer(run, 1, 2);
  ASSERT_TRUE(reducer.found) << reducer.why_not;
  const RecordedRun one = rebucketDdp(run, reducer, DdpBucketing{100 * kMiB, kMiB}, false);  // {1 MiB}, {2, 2, 3}
  const RecordedRank& r = one.ranks.front();
  EXPECT_EQ(allReduceBytes(r, 0), (std::vector<std::uint64_t>{kMiB, 4 * kMiB, 3 * kMiB}));  // outside [1, 2]
  EXPECT_EQ(allReduceBytes(r, 1), (std::vector<std::uint64_t>{kMiB, 7 * kMiB}));
  EXPECT_EQ(allReduceBytes(r, 2), (std::vector<std::uint64_t>{kMiB, 7 * kMiB}));
  // The copies are the recorded ones, in their order.
  auto copies = [](const RecordedRank& rank) {
    std::vector<std::uint64_t> out;
    for (const RecordedCall& rc : rank.calls)
      if (rc.call.kind == CallKind::Memcpy) out.push_back(rank.touches[rc.touch_begin].address);
    return out;
  };
  EXPECT_EQ(copies(r), copies(recorded.rank));
  // Ids follow positions, and each iteration's first call is indexed.
  for (std::size_t i = 0; i < r.calls.size(); ++i) EXPECT_EQ(r.calls[i].call.id, i);
  ASSERT_EQ(r.iteration_first_call.size(), 3u);
  // In iteration 1: the big bucket's all-reduce follows the copy of the last gradient, after
  // its event and the wait for it; the compute stream waits for it before the first copy out.
  std::vector<CallKind> kinds;
  for (const RecordedCall& rc : r.calls)
    if (rc.iteration == 1) kinds.push_back(rc.call.kind);
  const std::vector<CallKind> expected = {
      CallKind::Kernel, CallKind::Kernel, CallKind::Memcpy,  // forward, gradient 0 and its copy
      CallKind::EventRecord, CallKind::StreamWait, CallKind::Collective, CallKind::EventRecord,  // bucket 0
      CallKind::Kernel, CallKind::Memcpy, CallKind::Kernel, CallKind::Memcpy, CallKind::Kernel, CallKind::Memcpy,
      CallKind::EventRecord, CallKind::StreamWait, CallKind::Collective, CallKind::EventRecord,  // bucket 1
      CallKind::StreamWait, CallKind::Memcpy,                                                    // bucket 0 out
      CallKind::StreamWait, CallKind::Memcpy, CallKind::Memcpy, CallKind::Memcpy,                // bucket 1 out
      CallKind::Kernel};
  EXPECT_EQ(kinds, expected);
  // The new all-reduces are matched across ranks by numbers apart from every recorded one.
  for (const RecordedCall& rc : r.calls) {
    if (rc.iteration == 1 && rc.call.kind == CallKind::Collective) {
      EXPECT_LT(rc.collective_seq, 0);
    }
  }

  // The recorded cap writes the recorded buckets again.
  const RecordedRun same = rebucketDdp(run, reducer, kRecorded, false);
  EXPECT_EQ(allReduceBytes(same.ranks.front(), 1), allReduceBytes(recorded.rank, 1));
  EXPECT_EQ(same.ranks.front().calls.size(), recorded.rank.calls.size());
  // An explicit cap of 3 MiB cuts the first bucket there too: {1, 2}, {2, 3}.
  const RecordedRun explicit_cap = rebucketDdp(run, reducer, ddpBucketingForCap(3 * kMiB), false);
  EXPECT_EQ(allReduceBytes(explicit_cap.ranks.front(), 1), (std::vector<std::uint64_t>{3 * kMiB, 5 * kMiB}));
}

std::vector<CallKind> kindsOf(const RecordedRank& rank, std::int64_t iteration) {
  std::vector<CallKind> kinds;
  for (const RecordedCall& rc : rank.calls)
    if (rc.iteration == iteration) kinds.push_back(rc.call.kind);
  return kinds;
}

// gradient_as_bucket_view=True: the reducer is found by its all-reduces, each bucket cut into
// gradients where backward's kernels were given addresses in it, each gradient up to the next.
TEST(DdpBuckets, WithGradientsAsBucketViewsTheKernelsGivenTheSlotsCutTheBuckets) {
  const DdpRank r(kRecorded, 3, true, Views::On);
  const DdpReducer ddp = findDdpReducer(runOf(r), 1, 2);
  ASSERT_TRUE(ddp.found) << ddp.why_not;
  EXPECT_TRUE(ddp.gradient_as_bucket_view);
  EXPECT_EQ(ddp.bucket_bytes, (std::vector<std::uint64_t>{kMiB, 4 * kMiB, 3 * kMiB}));
  EXPECT_EQ(ddp.gradient_sizes, r.sizes);
  EXPECT_FALSE(findDdpReducer(runOf(DdpRank(kRecorded, 3)), 1, 2).gradient_as_bucket_view);
  // Copies it never made are not written.
  EXPECT_THROW(rebucketDdp(runOf(r), ddp, std::nullopt, false), std::invalid_argument);
}

// Each iteration in [1, 2], rewritten, is call for call what the job recorded with those
// settings issues: the kinds in order and the buckets' all-reduces (the rewrite keeps the
// recorded slots' addresses, so addresses are not compared).
void expectRecordedAs(const RecordedRank& written, const DdpRank& issued) {
  for (std::int64_t n : {1, 2}) {
    EXPECT_EQ(kindsOf(written, n), kindsOf(issued.rank, n)) << "iteration " << n;
    EXPECT_EQ(allReduceBytes(written, n), allReduceBytes(issued.rank, n)) << "iteration " << n;
  }
}

// A run that copied its gradients, written with gradient_as_bucket_view=True, is the run recorded
// with it: the copies gone, each bucket's all-reduce after its last gradient's kernel, the
// compute stream's waits for the buckets together after backward.
TEST(DdpBuckets, BucketViewsDropTheCopiesAsTheJobWithThemIssues) {
  const RecordedRun copies = runOf(DdpRank(kRecorded, 3));
  const DdpReducer reducer = findDdpReducer(copies, 1, 2);
  ASSERT_TRUE(reducer.found) << reducer.why_not;
  expectRecordedAs(rebucketDdp(copies, reducer, std::nullopt, true).ranks.front(),
                   DdpRank(kRecorded, 3, true, Views::On));
  // With another cap at once.
  const DdpBucketing one{100 * kMiB, kMiB};
  expectRecordedAs(rebucketDdp(copies, reducer, one, true).ranks.front(), DdpRank(one, 3, true, Views::On));
  // The recorded settings written anew are the recorded calls.
  expectRecordedAs(rebucketDdp(copies, reducer, std::nullopt, false).ranks.front(), DdpRank(kRecorded, 3));
}

// DDP without a communication hook divides each gradient into its bucket with a kernel, which
// cuts the buckets into gradients as views do; with gradient_as_bucket_view=True the division
// stays (in place) and only the copies back out go.
TEST(DdpBuckets, WithoutAHookTheDivisionsIntoTheBucketsCutThemAndStayWithViews) {
  const RecordedRun divided = runOf(DdpRank(kRecorded, 3, true, Views::Off, Hook::No));
  const DdpReducer reducer = findDdpReducer(divided, 1, 2);
  ASSERT_TRUE(reducer.found) << reducer.why_not;
  EXPECT_FALSE(reducer.gradient_as_bucket_view);
  EXPECT_EQ(reducer.bucket_bytes, (std::vector<std::uint64_t>{kMiB, 4 * kMiB, 3 * kMiB}));
  EXPECT_EQ(reducer.gradient_sizes, DdpRank(kRecorded, 1).sizes);
  const DdpRank views(kRecorded, 3, true, Views::On, Hook::No);
  expectRecordedAs(rebucketDdp(divided, reducer, std::nullopt, true).ranks.front(), views);
  const DdpBucketing one{100 * kMiB, kMiB};
  expectRecordedAs(rebucketDdp(divided, reducer, one, false).ranks.front(), DdpRank(one, 3, true, Views::Off, Hook::No));
  const DdpReducer read_views = findDdpReducer(runOf(views), 1, 2);
  ASSERT_TRUE(read_views.found) << read_views.why_not;
  EXPECT_TRUE(read_views.gradient_as_bucket_view);
  EXPECT_EQ(read_views.gradient_sizes, DdpRank(kRecorded, 1).sizes);
}

// A run recorded with views, written for every other cap, is the run recorded with that cap.
TEST(DdpBuckets, AViewsRunWrittenForAnotherCapIsTheRunWithThatCap) {
  const RecordedRun views = runOf(DdpRank(kRecorded, 3, true, Views::On));
  const DdpReducer reducer = findDdpReducer(views, 1, 2);
  ASSERT_TRUE(reducer.found) << reducer.why_not;
  for (const DdpBucketing& cap : {DdpBucketing{100 * kMiB, kMiB}, ddpBucketingForCap(kMiB), ddpBucketingForCap(3 * kMiB),
                                  ddpBucketingForCap(5 * kMiB), kRecorded}) {
    SCOPED_TRACE(cap.cap_bytes);
    expectRecordedAs(rebucketDdp(views, reducer, cap, true).ranks.front(), DdpRank(cap, 3, true, Views::On));
  }
}

std::vector<std::uint64_t> mib(std::initializer_list<std::uint64_t> sizes) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s : sizes) out.push_back(s * kMiB);
  return out;
}

std::size_t memcpys(const RecordedRank& rank, std::int64_t iteration) {
  std::size_t n = 0;
  for (const RecordedCall& rc : rank.calls) n += rc.iteration == iteration && rc.call.kind == CallKind::Memcpy;
  return n;
}

// From the buckets alone, gradient_as_bucket_view=False is read from the copies after the last
// bucket that add up to the buckets' bytes; dropping them is the run with views (a hook's: no
// copy in either), and a run with views has none to read.
TEST(DdpBucketsBySize, TheCopiesBackOfTheBucketsReadGradientAsBucketView) {
  const RecordedRun copies = runOf(DdpRank(kRecorded, 3));
  const DdpBucketsBySize b = ddpBucketsOfReducer(copies, findDdpReducer(copies, 1, 2));
  ASSERT_TRUE(b.found) << b.why_not;
  ASSERT_TRUE(b.copies_back) << b.copies_back_why_not;
  for (const DdpBucketCalls& it : b.ranks.front()) EXPECT_EQ(it.copies_back.size(), 4u);
  const RecordedRank dropped = dropDdpCopiesBack(copies, b).ranks.front();
  for (std::int64_t n : {1, 2}) {
    EXPECT_EQ(memcpys(dropped, n), 4u);  // the copies in stay
    EXPECT_EQ(allReduceBytes(dropped, n), allReduceBytes(copies.ranks.front(), n));
  }
  EXPECT_EQ(memcpys(dropped, 0), 8u);  // outside [1, 2]
  EXPECT_EQ(dropped.calls.size(), copies.ranks.front().calls.size() - 2 * 4);

  const RecordedRun views = runOf(DdpRank(kRecorded, 3, true, Views::On));
  const DdpBucketsBySize none = ddpBucketsOfReducer(views, findDdpReducer(views, 1, 2));
  ASSERT_TRUE(none.found) << none.why_not;
  EXPECT_FALSE(none.copies_back);
  EXPECT_NE(none.copies_back_why_not.find("are not the buckets' 8388608 bytes copied back"), std::string::npos)
      << none.copies_back_why_not;
}

// From the buckets alone: the recorded cap (the least middle bucket, 5 MiB) gives the recorded
// buckets; a smaller one cuts a recorded bucket anywhere within 5 MiB of its start, and
// nowhere after (the 6 MiB bucket ends with a gradient across its 5 MiB mark); a larger one
// cuts only where gradients can end.
TEST(DdpBucketsBySize, TheRecordedCapGivesTheRecordedBucketsAndOthersCutWhereGradientsCanEnd) {
  const std::vector<std::uint64_t> recorded = mib({1, 6, 5, 2});
  const auto with_first_apart = [](std::uint64_t cap) { return DdpBucketing{cap, kMiB}; };
  EXPECT_EQ(ddpBucketsFor(recorded, 5 * kMiB, true, with_first_apart(5 * kMiB)), recorded);
  EXPECT_EQ(ddpBucketsFor(recorded, 5 * kMiB, true, with_first_apart(2 * kMiB)), mib({1, 2, 2, 2, 2, 2, 2, 1}));
  EXPECT_EQ(ddpBucketsFor(recorded, 5 * kMiB, true, with_first_apart(8 * kMiB)), mib({1, 8, 5}));
  EXPECT_EQ(ddpBucketsFor(recorded, 5 * kMiB, true, with_first_apart(100 * kMiB)), mib({1, 13}));
  // The first bucket at the cap too: it takes the recorded first (DDP's 1 MiB apart) and the next
  // MiB; the cut 6 MiB in lies past 5 MiB of the second recorded bucket's start, so it moves to
  // that bucket's end.
  EXPECT_EQ(ddpBucketsFor(recorded, 5 * kMiB, true, ddpBucketingForCap(2 * kMiB)), mib({2, 2, 3, 2, 2, 2, 1}));
  // Without a bound (fewer than three buckets), gradients may end anywhere past the first.
  EXPECT_EQ(ddpBucketsFor(mib({1, 7}), 0, true, with_first_apart(3 * kMiB)), mib({1, 3, 3, 1}));
}

// A recorded first bucket cut at the cap, as the others, may be cut again anywhere within the cap
// bound of its start; one set apart only within 1 MiB, so that 5 MiB of it stay whole.
TEST(DdpBucketsBySize, AFirstBucketCutAtTheCapIsCutAgainLikeTheOthers) {
  const std::vector<std::uint64_t> recorded = mib({5, 6, 5, 2});
  EXPECT_EQ(ddpBucketsFor(recorded, 5 * kMiB, false, ddpBucketingForCap(2 * kMiB)), mib({2, 2, 2, 2, 3, 2, 2, 2, 1}));
  EXPECT_EQ(ddpBucketsFor(recorded, 5 * kMiB, true, ddpBucketingForCap(2 * kMiB)), mib({5, 2, 2, 2, 2, 2, 2, 1}));
  EXPECT_EQ(ddpBucketsFor(recorded, 5 * kMiB, false, ddpBucketingForCap(5 * kMiB)), recorded);
}

// Which way the recorded first bucket was cut, from the buckets: set apart when under half the
// cap bound (DDP's 1 MiB first bucket: here 1 MiB against a bound of 4), at the cap otherwise (cut
// at 2 MiB: 3 MiB against 2); with fewer than three buckets there is no bound, and it is taken as
// set apart.
TEST(DdpBucketsBySize, TheRecordedFirstBucketIsSetApartWhenWellUnderTheOthers) {
  const auto bySize = [](const DdpBucketing& bucketing) {
    const DdpRank rank(bucketing, 3);
    const RecordedRun run = runOf(rank);
    return ddpBucketsOfReducer(run, findDdpReducer(run, 1, 2));
  };
  const DdpBucketsBySize apart = bySize(kRecorded);
  ASSERT_TRUE(apart.found) << apart.why_not;
  EXPECT_TRUE(apart.first_apart);
  const DdpBucketsBySize at_cap = bySize(ddpBucketingForCap(2 * kMiB));
  ASSERT_TRUE(at_cap.found) << at_cap.why_not;
  EXPECT_EQ(at_cap.bucket_bytes, mib({3, 2, 3}));
  EXPECT_EQ(at_cap.cap_bound, 2 * kMiB);
  EXPECT_FALSE(at_cap.first_apart);
  const DdpBucketsBySize unbounded = bySize(ddpBucketingForCap(3 * kMiB));
  ASSERT_TRUE(unbounded.found) << unbounded.why_not;
  EXPECT_EQ(unbounded.bucket_bytes, mib({3, 5}));
  EXPECT_TRUE(unbounded.first_apart);
}

// The index, among the iteration's copies, of the last copy before each all-reduce.
std::vector<std::size_t> copiesBeforeEachAllReduce(const RecordedRank& rank, std::int64_t iteration) {
  std::vector<std::size_t> out;
  std::size_t copies = 0;
  for (const RecordedCall& rc : rank.calls) {
    if (rc.iteration != iteration) continue;
    if (rc.call.kind == CallKind::Memcpy) ++copies;
    if (rc.call.kind == CallKind::Collective) out.push_back(copies - 1);
  }
  return out;
}

// The buckets {1}, {2, 2}, {3} MiB: at a cap of 2 MiB, {1}, {2}, {2}, {2}, {1}, each all-reduce
// after the launch that far along backward (the copies here: the second bucket's 4 MiB are two
// gradients, made by the launches between the first bucket's all-reduce and its own), waiting
// for the compute stream there; the recorded buckets, rewritten, where they were.
TEST(DdpBucketsBySize, AnotherCapWritesItsAllReducesWhereBackwardHasMadeTheirBytes) {
  const DdpRank recorded(kRecorded, 3);
  const RecordedRun run = runOf(recorded);
  const DdpBucketsBySize b = ddpBucketsOfReducer(run, findDdpReducer(run, 1, 2));
  ASSERT_TRUE(b.found) << b.why_not;
  EXPECT_EQ(b.bucket_bytes, mib({1, 4, 3}));
  EXPECT_EQ(b.cap_bound, 4 * kMiB);

  const RecordedRun same = rebucketDdpBySize(run, b, std::nullopt);
  EXPECT_EQ(allReduceBytes(same.ranks.front(), 1), mib({1, 4, 3}));
  EXPECT_EQ(copiesBeforeEachAllReduce(same.ranks.front(), 1), (std::vector<std::size_t>{0, 2, 3}));

  const RecordedRun two = rebucketDdpBySize(run, b, DdpBucketing{2 * kMiB, kMiB});
  const RecordedRank& r = two.ranks.front();
  EXPECT_EQ(allReduceBytes(r, 0), mib({1, 4, 3}));  // outside [1, 2]
  for (std::int64_t n : {1, 2}) {
    EXPECT_EQ(allReduceBytes(r, n), mib({1, 2, 2, 2, 1}));
    EXPECT_EQ(copiesBeforeEachAllReduce(r, n), (std::vector<std::size_t>{0, 1, 2, 3, 3}));
  }
  for (std::size_t i = 0; i < r.calls.size(); ++i) {
    EXPECT_EQ(r.calls[i].call.id, i);
    if (r.calls[i].iteration < 1 || r.calls[i].call.kind != CallKind::Collective) continue;
    // Each waits, on the NCCL stream, for an event recorded on the compute stream just before.
    ASSERT_GE(i, 2u);
    EXPECT_EQ(r.calls[i].call.stream, kNccl);
    EXPECT_EQ(r.calls[i - 1].call.kind, CallKind::StreamWait);
    EXPECT_EQ(r.calls[i - 1].call.stream, kNccl);
    EXPECT_EQ(r.calls[i - 2].call.kind, CallKind::EventRecord);
    EXPECT_EQ(r.calls[i - 2].call.stream, kCompute);
    EXPECT_EQ(r.calls[i - 2].call.event, r.calls[i - 1].call.event);
    EXPECT_LT(r.calls[i].collective_seq, 0);
  }
  // The recorded buckets end at 1, 5 and 8 MiB, where three of the new ones end too: those are
  // written in the recorded all-reduces' places; the other two are 3 calls each.
  EXPECT_EQ(r.calls.size(), recorded.rank.calls.size() + 2 * (2 * 3));
}

// The recorded calls with host times: 100 ns each, 601 for an all-reduce, 300 for its stream wait.
RecordedRun timedRun(const DdpRank& r) {
  RecordedRun run = runOf(r);
  for (RecordedCall& rc : run.ranks.front().calls) {
    const std::int64_t host = rc.call.kind == CallKind::Collective ? 601 : rc.call.kind == CallKind::StreamWait ? 300 : 100;
    rc.end = rc.start + host;
  }
  return run;
}

// The recorded buckets rewritten (the baseline every other cap is compared with) are the recorded
// calls at their recorded host times, each all-reduce written as a new one is: matched by its own
// number, its time the fit's rather than the recorded op's.
TEST(DdpBucketsBySize, TheRecordedBucketsRewrittenAreTheRecordedCallsAtTheirHostTimes) {
  const RecordedRun run = timedRun(DdpRank(kRecorded, 3));
  const DdpBucketsBySize b = ddpBucketsOfReducer(run, findDdpReducer(run, 1, 2));
  ASSERT_TRUE(b.found) << b.why_not;
  const RecordedRank& before = run.ranks.front();
  const RecordedRun same = rebucketDdpBySize(run, b, std::nullopt);
  const RecordedRank& after = same.ranks.front();
  ASSERT_EQ(after.calls.size(), before.calls.size());
  std::int64_t bucket = 0;  // within the step
  for (std::size_t i = 0; i < before.calls.size(); ++i) {
    const RecordedCall &was = before.calls[i], &is = after.calls[i];
    EXPECT_EQ(is.call.kind, was.call.kind) << i;
    EXPECT_EQ(is.call.stream, was.call.stream) << i;
    EXPECT_EQ(is.call.event, was.call.event) << i;
    EXPECT_EQ(is.start, was.start) << i;
    EXPECT_EQ(is.end, was.end) << i;
    EXPECT_EQ(is.iteration, was.iteration) << i;
    const bool rewritten = is.call.kind == CallKind::Collective && is.iteration >= 1;
    if (i > 0 && is.iteration != after.calls[i - 1].iteration) bucket = 0;
    EXPECT_EQ(is.collective_seq, rewritten ? -(2 + is.iteration * 65536 + bucket++) : was.collective_seq) << i;
    if (rewritten) {
      EXPECT_EQ(is.call.collective.count, was.call.collective.count) << i;
    }
  }
}

// The recorded buckets' host time stays: at a first bucket of 1 MiB and a cap of 3 MiB the buckets
// {1}, {4}, {3} MiB become {1}, {3}, {3}, {1}; the first and the last end where recorded ones
// end, and are written in their places; the recorded middle one's all-reduce and wait (901 ns)
// go, and the two new all-reduces take 450 and 451 ns of it. Each step ends when it did.
TEST(DdpBucketsBySize, TheHostTimeOfTheRecordedBucketsDroppedGoesToTheNewOnes) {
  const RecordedRun run = timedRun(DdpRank(kRecorded, 3));
  const DdpBucketsBySize b = ddpBucketsOfReducer(run, findDdpReducer(run, 1, 2));
  ASSERT_TRUE(b.found) << b.why_not;
  const RecordedRank& before = run.ranks.front();
  const RecordedRun three = rebucketDdpBySize(run, b, DdpBucketing{3 * kMiB, kMiB});
  const RecordedRank& after = three.ranks.front();
  const auto stepEnd = [](const RecordedRank& rank, std::int64_t n) {
    std::int64_t end = 0;
    for (const RecordedCall& rc : rank.calls)
      if (rc.iteration == n) end = rc.end;
    return end;
  };
  for (std::int64_t n : {0, 1, 2}) EXPECT_EQ(stepEnd(after, n), stepEnd(before, n)) << n;
  EXPECT_EQ(allReduceBytes(after, 1), mib({1, 3, 3, 1}));
  std::vector<std::int64_t> hosts;
  for (const RecordedCall& rc : after.calls)
    if (rc.call.kind == CallKind::Collective && rc.iteration == 1) hosts.push_back(rc.end - rc.start);
  EXPECT_EQ(hosts, (std::vector<std::int64_t>{601, 450, 451, 601}));
}

}  // namespace
}  // namespace syncopate::tuner

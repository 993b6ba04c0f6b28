// How much communication slows down beside compute, measured from a run described by hand as
// the collector records it: a collective's size on its collective row, none on its op.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/run_model_builder.hpp"
#include "syncopate/tuner/fits.hpp"

namespace syncopate::tuner {
namespace {

constexpr std::int64_t kUs = 1000;
constexpr std::int64_t kCommId = 7;
constexpr int kRounds = 8;
constexpr double kSlowdown = 0.25;

struct Collective {
  std::int64_t count;    // floats
  std::int64_t alone_ns;
};

enum class Overlap : std::uint8_t {
  Alternating,      // even rounds: the small call overlapped; odd rounds: the large one
  SmallCallsAlways  // the small call always overlapped, the large one never
};

// Two ranks; each round, at the same times on both, a 1 MiB all-reduce and, 1 ms later, an
// 8 MiB one, on a communication stream, each alone or beside a kernel on the compute stream as
// `overlap` says. Overlapped, a call takes (1 + kSlowdown) times as long. `count_known` false:
// the collector lost the calls' sizes.
analyzer::RunModel twoSizes(Overlap overlap, bool count_known = true) {
  const Collective small{1 << 18, 100 * kUs}, large{1 << 21, 500 * kUs};
  analyzer::RunModelBuilder b;
  for (int r = 0; r < 2; ++r) {
    analyzer::RankInfo info;
    info.rank = r;
    info.world_size = 2;
    info.host = "host" + std::to_string(r);
    info.source = "by hand";
    const analyzer::Index rank = b.addRank(info);
    const analyzer::Index compute = b.addStream(rank, 0, 1, "compute");
    const analyzer::Index comm = b.addStream(rank, 0, 2, "communication");
    std::int64_t seq = 0;
    for (int k = 0; k < kRounds; ++k) {
      const std::int64_t round = k * 2'000 * kUs;
      const bool alternate = overlap == Overlap::Alternating && k % 2 == 1;
      for (const auto& [c, at, overlapped] :
           {std::tuple{small, round, overlap == Overlap::SmallCallsAlways || alternate},
            std::tuple{large, round + 1'000 * kUs, overlap == Overlap::Alternating && !alternate}}) {
        const auto duration = static_cast<std::int64_t>(static_cast<double>(c.alone_ns) * (overlapped ? 1 + kSlowdown : 1));
        if (overlapped) {
          b.addOp({.stream = compute, .name = b.intern("gemm"), .start = at - 10 * kUs, .end = at + duration + 10 * kUs});
        }
        const analyzer::Index op = b.addOp(
            {.stream = comm, .kind = trace::OpKind::Collective, .name = b.intern("ncclAllReduce"), .start = at, .end = at + duration});
        analyzer::CollectiveInput row;
        row.comm_id = kCommId;
        row.comm_rank = r;
        row.comm_size = 2;
        row.seq = seq++;
        row.coll_type = trace::CollType::AllReduce;
        row.dtype = trace::DataType::Float32;
        row.red_op = trace::RedOp::Sum;
        row.count = count_known ? c.count : analyzer::kUnknown;
        b.addCollective(op, row);
      }
    }
  }
  auto built = std::move(b).finish();
  EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.message());
  return std::move(built).value();
}

// One rank's launches of one kernel name: `alone` of them alone, each 150 us, and `overlapped`
// inside a collective, each 10% slower; then one launch of a shape nine times as long, inside a
// collective, 10% slower too; one of a shape of 1 ms whose first 200 us ran beside a collective
// (220 us then); and one of 300 us whose first 100 us did (310 us in all: under three times 150).
analyzer::RunModel oneKernelNameOnSeveralShapes(int alone, int overlapped) {
  analyzer::RunModelBuilder b;
  analyzer::RankInfo info;
  info.rank = 0;
  info.world_size = 1;
  info.host = "host0";
  info.source = "by hand";
  const analyzer::Index rank = b.addRank(info);
  const analyzer::Index compute = b.addStream(rank, 0, 1, "compute");
  const analyzer::Index comm = b.addStream(rank, 0, 2, "communication");
  const analyzer::StringId gemm = b.intern("gemm"), all_reduce = b.intern("ncclAllReduce");
  std::int64_t at = 0;
  auto launch = [&](std::int64_t duration, std::int64_t overlapped_ns) {
    b.addOp({.stream = compute, .name = gemm, .start = at, .end = at + duration});
    if (overlapped_ns > 0) {
      b.addOp({.stream = comm, .kind = trace::OpKind::Collective, .name = all_reduce, .start = at, .end = at + overlapped_ns});
    }
    at += duration + 100 * kUs;
  };
  const auto slowed = [](std::int64_t ns) { return static_cast<std::int64_t>(static_cast<double>(ns) * 1.1); };
  for (int i = 0; i < alone; ++i) launch(150 * kUs, 0);
  for (int i = 0; i < overlapped; ++i) launch(slowed(150 * kUs), slowed(150 * kUs));
  launch(slowed(1'350 * kUs), slowed(1'350 * kUs));
  launch(800 * kUs + slowed(200 * kUs), slowed(200 * kUs));
  launch(200 * kUs + slowed(100 * kUs), slowed(100 * kUs));
  auto built = std::move(b).finish();
  EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.message());
  return std::move(built).value();
}

Interference measured(const analyzer::RunModel& model) {
  auto analysis = analyzer::analyze(model);
  EXPECT_TRUE(analysis.ok()) << (analysis.ok() ? "" : analysis.message());
  return measureInterference(model, *analysis);
}

TEST(Interference, EachCollectiveSizeIsMeasuredAgainstItsOwnCallsAlone) {
  const Interference i = measured(twoSizes(Overlap::Alternating));
  ASSERT_TRUE(i.communication.measured);
  EXPECT_NEAR(i.communication.slowdown, kSlowdown, 1e-9);
  // Every overlapped call of both sizes on both ranks.
  EXPECT_EQ(i.communication.samples, 2 * kRounds);
  // The kernels ran beside communication every time: nothing to measure them against.
  EXPECT_FALSE(i.compute.measured);
  EXPECT_DOUBLE_EQ(i.compute.slowdown, kPriorComputeSlowdown);
}

// The small calls never ran alone: there is nothing to measure them against, least of all the
// large calls, which did.
TEST(Interference, ASizeThatNeverRanAloneIsNotMeasuredAgainstAnother) {
  const Interference i = measured(twoSizes(Overlap::SmallCallsAlways));
  EXPECT_FALSE(i.communication.measured);
  EXPECT_DOUBLE_EQ(i.communication.slowdown, kPriorCommunicationSlowdown);
}

TEST(Interference, CallsOfUnknownSizeAreOfNoKind) {
  const Interference i = measured(twoSizes(Overlap::SmallCallsAlways, false));
  EXPECT_FALSE(i.communication.measured);
  EXPECT_DOUBLE_EQ(i.communication.slowdown, kPriorCommunicationSlowdown);
}

// The fit, which weighs each launch by its overlap squared, read from the two long launches the
// largest slowdown it reports (10x) while they were taken as slower runs of the name's 150 us:
// the one nine times as long is another shape, and so are the ones whose 800 us and 200 us
// outside the overlap alone outlast 150 us. The four launches of the name's own shape say 10%.
TEST(Interference, ALongerShapeOfAKernelNameDoesNotOutweighTheRest) {
  const Interference i = measured(oneKernelNameOnSeveralShapes(8, 4));
  ASSERT_TRUE(i.compute.measured);
  EXPECT_NEAR(i.compute.slowdown, 0.10, 1e-9);
  EXPECT_EQ(i.compute.samples, 4);
}

}  // namespace
}  // namespace syncopate::tuner

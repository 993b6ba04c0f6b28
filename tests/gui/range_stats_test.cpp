// Statistics of a selected range on the hand-built two-rank run, with answers worked out by
// hand from the op times (see sample_runs.hpp).
#include <QtTest>

#include "sample_runs.hpp"
#include "syncopate/gui/model/range_stats.hpp"

using namespace syncopate::gui;
using namespace syncopate::gui::testing;
using syncopate::trace::OpKind;

class RangeStatsTest : public QObject {
  Q_OBJECT
 private slots:
  void firstIterationWindow() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    const RangeStatistics s = computeRangeStatistics(m.runsOnView(), 0, us(100));
    QCOMPARE(s.runs.size(), std::size_t{1});
    const RunRangeStats& run = s.runs[0];
    QCOMPARE(run.ranks.size(), std::size_t{2});
    const auto& r0 = run.ranks[0];
    QCOMPARE(r0.rank_number, 0);
    QCOMPARE(r0.time.window_ns, us(100));
    QCOMPARE(r0.time.compute_ns, us(40));
    QCOMPARE(r0.time.communication_ns, us(40));
    QCOMPARE(r0.time.overlapped_communication_ns, 0);
    QCOMPARE(r0.time.exposed_communication_ns, us(40));
    QCOMPARE(r0.time.idle_ns, us(20));
    QCOMPARE(r0.ops, 2);
    const auto& r1 = run.ranks[1];
    QCOMPARE(r1.time.communication_ns, us(30));  // rank 1 arrived 10 µs late
    QCOMPARE(r1.time.idle_ns, us(30));
    QCOMPARE(run.by_kind[static_cast<std::size_t>(OpKind::Kernel)].count, 2);
    QCOMPARE(run.by_kind[static_cast<std::size_t>(OpKind::Kernel)].time_ns, us(80));
    QCOMPARE(run.by_kind[static_cast<std::size_t>(OpKind::Collective)].count, 2);
    QCOMPARE(run.by_kind[static_cast<std::size_t>(OpKind::Collective)].time_ns, us(70));
    QCOMPARE(run.top_kernels.size(), std::size_t{2});
    QCOMPARE(run.top_kernels[0].name, std::string("gemm"));
    QCOMPARE(run.top_kernels[0].count, 2);
    QCOMPARE(run.top_kernels[0].total_ns, us(80));
    QCOMPARE(run.top_kernels[0].ranks, 2);
    QCOMPARE(run.top_kernels[1].name, std::string("AllReduce"));
    QCOMPARE(run.top_kernels[1].total_ns, us(70));
  }

  void aRangeCutThroughOps() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    const RangeStatistics s = computeRangeStatistics(m.runsOnView(), us(170), us(140));  // reversed on purpose
    QCOMPARE(s.start, us(140));
    QCOMPARE(s.end, us(170));
    const auto& r0 = s.runs[0].ranks[0];
    // gemm [105,145) gives 5 µs, overlap_a/b [150,180) give 20 µs; the all-reduce [150,190) 20 µs,
    // all of it under compute.
    QCOMPARE(r0.time.compute_ns, us(25));
    QCOMPARE(r0.time.communication_ns, us(20));
    QCOMPARE(r0.time.overlapped_communication_ns, us(20));
    QCOMPARE(r0.time.exposed_communication_ns, 0);
    QCOMPARE(r0.ops, 3);
    const auto& r1 = s.runs[0].ranks[1];
    QCOMPARE(r1.time.compute_ns, us(5));
    QCOMPARE(r1.time.memory_ns, us(10));
    QCOMPARE(r1.time.exposed_communication_ns, us(10));
    QCOMPARE(r1.time.idle_ns, us(5));
    QCOMPARE(r1.ops, 2);
    QCOMPARE(s.runs[0].by_kind[static_cast<std::size_t>(OpKind::Memcpy)].count, 1);
  }

  void comparedRunsAreMeasuredInTheirOwnTime() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun(), 0, "A"), prepared(twoRankRun(5'000'000), 1, "B")});
    m.alignRunsOnIteration();
    const RangeStatistics s = computeRangeStatistics(m.runsOnView(), 0, us(100));
    QCOMPARE(s.runs.size(), std::size_t{2});
    QCOMPARE(s.runs[1].label, std::string("B"));
    QCOMPARE(s.runs[1].start, 5'000'000);
    QCOMPARE(s.runs[1].ranks[0].time.compute_ns, s.runs[0].ranks[0].time.compute_ns);
    QCOMPARE(s.runs[1].ranks[1].time.exposed_communication_ns, us(30));
  }
};

QTEST_GUILESS_MAIN(RangeStatsTest)
#include "range_stats_test.moc"

// The timeline model on hand-built runs: lanes grouped by host and rank (threads, their NVTX
// ranges, then streams), stacking of overlapping items, collapsible groups, hit-testing at fine
// and coarse zoom, finding an item's lane, and compare mode's alignment on an iteration.
#include <QtTest>

#include "enum_compare.hpp"

#include "sample_runs.hpp"
#include "syncopate/gui/model/timeline_model.hpp"

using namespace syncopate::gui;
using namespace syncopate::gui::testing;

namespace {

std::vector<std::string> laneLabels(const TimelineModel& m) {
  std::vector<std::string> out;
  for (std::uint32_t l = 0; l < m.laneCount(); ++l) out.push_back(m.lane(l).label);
  return out;
}

std::uint32_t laneNamed(const TimelineModel& m, std::uint32_t run, syncopate::analyzer::Index rank, const std::string& label) {
  for (std::uint32_t l = 0; l < m.laneCount(); ++l)
    if (m.lane(l).run == run && m.lane(l).rank == rank && m.lane(l).label == label) return l;
  qFatal("no lane %s", label.c_str());
}

}  // namespace

class TimelineModelTest : public QObject {
  Q_OBJECT
 private slots:
  void lanesAreGroupedByHostThenRankThreadsFirst() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    const std::vector<std::string> expected = {
        "main (100)", "NVTX · main (100)", "  NVTX [2]", "compute · dev 0", "  ops [2]", "nccl · dev 0",
        "main (101)", "NVTX · main (101)", "  NVTX [2]", "compute · dev 0", "nccl · dev 0"};
    QCOMPARE(laneLabels(m), expected);
    QCOMPARE(m.groupCount(), std::size_t{5});
    QCOMPARE_ENUM(m.group(0).kind, GroupKind::Run);
    QCOMPARE_ENUM(m.group(1).kind, GroupKind::Host);
    QCOMPARE(m.group(1).label, std::string("node-a"));
    QCOMPARE_ENUM(m.group(2).kind, GroupKind::Rank);
    QCOMPARE(m.group(2).label, std::string("rank 0 · pid 1000"));
    QCOMPARE(m.group(2).lanes.size(), std::size_t{6});
    QCOMPARE(m.group(3).label, std::string("node-b"));
    QCOMPARE(m.group(4).lanes.size(), std::size_t{5});
    QCOMPARE_ENUM(m.lane(0).kind, LaneKind::Thread);
    QCOMPARE_ENUM(m.lane(1).kind, LaneKind::Ranges);
    QCOMPARE_ENUM(m.lane(3).kind, LaneKind::Stream);
  }

  void overlappingItemsAreStackedNotDropped() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    // Nested NVTX: ProfilerStep#1 and #2 on the first lane, "forward" below.
    const Lane& nvtx = m.lane(1);
    QCOMPARE(nvtx.size(), std::size_t{2});
    QCOMPARE(nvtx.start[0], us(0));
    QCOMPARE(nvtx.start[1], us(100));
    const Lane& nested = m.lane(2);
    QCOMPARE(nested.size(), std::size_t{1});
    QCOMPARE(nested.end[0], us(40));
    QCOMPARE(nested.stack, 1u);
    // overlap_b overlaps overlap_a on the compute stream of rank 0: it goes one lane down.
    const Lane& compute = m.lane(3);
    QCOMPARE(compute.size(), std::size_t{3});  // gemm, gemm, overlap_a
    QCOMPARE(m.lane(4).size(), std::size_t{1});
    QCOMPARE(m.lane(4).start[0], us(160));
    // Every op of the run is on exactly one lane.
    std::size_t ops = 0;
    for (std::uint32_t l = 0; l < m.laneCount(); ++l)
      if (m.lane(l).kind == LaneKind::Stream) ops += m.lane(l).size();
    QCOMPARE(ops, m.run(0).model.ops.size());
  }

  void itemsAreColouredByWhatTheyAre() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    QCOMPARE_ENUM(m.lane(3).visual[0], VisualKind::Compute);
    QCOMPARE_ENUM(m.lane(5).visual[0], VisualKind::Communication);
    const Lane& calls1 = m.lane(6);  // rank 1: launch, allreduce, launch, allreduce, sync
    QCOMPARE(calls1.size(), std::size_t{5});
    QCOMPARE_ENUM(calls1.visual[0], VisualKind::HostCall);
    QCOMPARE_ENUM(calls1.visual[1], VisualKind::NcclCall);
    QCOMPARE_ENUM(calls1.visual[4], VisualKind::Sync);
    const Lane& compute1 = m.lane(9);
    QCOMPARE_ENUM(compute1.visual[2], VisualKind::Memory);
  }

  void layoutAndCollapse() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    // host, rank, strip, 6 lanes, host, rank, strip, 5 lanes; no run header for a single run.
    QCOMPARE(m.rows().size(), std::size_t{17});
    QCOMPARE(m.contentHeight(), 4 * TimelineModel::kGroupHeight + 2 * TimelineModel::kStripHeight + 11 * TimelineModel::kLaneHeight);
    QCOMPARE_ENUM(m.rows()[2].kind, LayoutRow::Kind::RankStrip);
    QCOMPARE(m.rowAt(0.0), 0);
    QCOMPARE(m.rowAt(TimelineModel::kGroupHeight + 1), 1);
    QCOMPARE(m.rowAt(-1.0), -1);
    QCOMPARE(m.rowAt(m.contentHeight() + 1), -1);
    m.setCollapsed(2, true);  // rank 0 keeps its header and strip
    QCOMPARE(m.rows().size(), std::size_t{11});
    QCOMPARE(m.rowOfLane(0), -1);
    QCOMPARE(m.rowOfLane(6), 6);
    m.setCollapsed(1, true);  // host node-a hides rank 0 entirely
    QCOMPARE(m.rows().size(), std::size_t{9});
    QCOMPARE(m.rowOfGroup(2), -1);
    m.setCollapsed(1, false);
    m.setCollapsed(2, false);
    QCOMPARE(m.rows().size(), std::size_t{17});
    m.setAllRanksCollapsed(true);
    QCOMPARE(m.rows().size(), std::size_t{6});
    m.setAllRanksCollapsed(false);
    // Hiding NVTX lanes removes their two lanes per rank; the others keep their order.
    m.setLaneKindShown(LaneKind::Ranges, false);
    QCOMPARE(m.rows().size(), std::size_t{13});
    QCOMPARE(m.rowOfLane(1), -1);
    QCOMPARE(m.rowOfLane(3), 4);  // host, rank, strip, thread, then the compute stream
    m.setLaneKindShown(LaneKind::Ranges, true);
    QCOMPARE(m.rows().size(), std::size_t{17});
  }

  void hitTestingFindsTheItemUnderThePointer() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    const std::uint32_t compute = laneNamed(m, 0, 0, "compute · dev 0");
    // Fine zoom: 100 ns per pixel, 3 px tolerance.
    Hit h = m.hitTest(compute, us(25), 100);
    QVERIFY(h.single());
    QCOMPARE(h.first, 0u);
    QCOMPARE(h.start, us(5));
    QCOMPARE(h.end, us(45));
    QCOMPARE_ENUM(m.itemAt({h.lane, h.first}).table, ItemTable::Op);
    QCOMPARE(m.run(0).model.str(m.run(0).model.ops.name[m.itemAt({h.lane, h.first}).index]), std::string_view("gemm"));
    h = m.hitTest(compute, us(45) + 200, 100);  // 2 px past the end: still the gemm
    QVERIFY(h.single());
    QCOMPARE(h.first, 0u);
    QVERIFY(!m.hitTest(compute, us(47), 100).found());  // 20 px away: nothing
    h = m.hitTest(compute, us(120), 100);
    QVERIFY(h.single());
    QCOMPARE(h.first, 1u);
    // Coarse zoom (30 µs per pixel): the lane is drawn as one block of its 3 ops.
    h = m.hitTest(compute, us(25), 30'000);
    QCOMPARE(h.count, 3u);
    QCOMPARE(h.start, us(5));
    QCOMPARE(h.end, us(170));
    QCOMPARE_ENUM(h.kind, VisualKind::Compute);
  }

  void locateFindsEveryItemOnItsLane() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    for (std::uint32_t l = 0; l < m.laneCount(); ++l) {
      for (std::uint32_t p = 0; p < m.lane(l).size(); ++p) {
        auto at = m.locate(m.lane(l).ref(p));
        QVERIFY(at.has_value());
        QCOMPARE(at->lane, l);
        QCOMPARE(at->pos, p);
      }
    }
    QVERIFY(!m.locate({0, ItemTable::Op, 100000}).has_value());
    QVERIFY(!m.locate({3, ItemTable::Op, 0}).has_value());
  }

  void compareAlignsTheSecondRunOnAnIteration() {
    TimelineModel m;
    // The second run started 5 ms later on its clock.
    m.setRuns({prepared(twoRankRun(), 0, "A"), prepared(twoRankRun(5'000'000), 1, "B")});
    QCOMPARE(m.displayOffset(1), 0);
    const auto used = m.alignRunsOnIteration();
    QVERIFY(used.has_value());
    QCOMPARE(*used, 1);
    QCOMPARE(m.displayOffset(1), -5'000'000);
    QCOMPARE(m.beginNs(), 0);
    QCOMPARE(m.endNs(), us(200));  // the last NVTX range ends at 200 µs
    QCOMPARE(*m.alignRunsOnIteration(2), 2);
    QCOMPARE(m.displayOffset(1), -5'000'000);
    // Run headers appear when comparing; lanes of run B follow run A's.
    QCOMPARE(m.rows().size(), std::size_t{36});
    QCOMPARE_ENUM(m.rows()[0].kind, LayoutRow::Kind::Group);
    QCOMPARE_ENUM(m.group(m.rows()[0].index).kind, GroupKind::Run);
    QCOMPARE(m.lane(11).run, 1u);
    // Hit-testing and locating work in display time for the shifted run.
    const std::uint32_t compute_b = laneNamed(m, 1, 0, "compute · dev 0");
    const Hit h = m.hitTest(compute_b, us(25), 100);
    QVERIFY(h.single());
    QCOMPARE(h.start, us(5));
    QCOMPARE(m.displayStart(*m.locate(m.itemAt({h.lane, h.first}))), us(5));
    // An iteration that only one run has: the runs' beginnings are aligned instead.
    QVERIFY(!m.alignRunsOnIteration(7).has_value());
    QCOMPARE(m.displayOffset(1), -5'000'000);
  }
};

QTEST_GUILESS_MAIN(TimelineModelTest)
#include "timeline_model_test.moc"

// Collective links (participants, arrival skew, who was late), launch flows both ways, the
// critical path placed on lanes, and the details of an item.
#include <QtTest>

#include "enum_compare.hpp"

#include "sample_runs.hpp"
#include "syncopate/gui/model/critical_path_overlay.hpp"
#include "syncopate/gui/model/item_details.hpp"
#include "syncopate/gui/model/links.hpp"

using namespace syncopate::gui;
using namespace syncopate::gui::testing;
using syncopate::analyzer::Index;

namespace {

// The op of `rank` named `name` that starts at `start`.
Index opAt(const LoadedRun& run, int rank, std::string_view name, std::int64_t start) {
  const auto& m = run.model;
  for (Index o = 0; o < m.ops.size(); ++o)
    if (m.ranks[m.rankOfOp(o)].rank == rank && m.str(m.ops.name[o]) == name && m.ops.start[o] == start) return o;
  qFatal("no such op");
}

void analyse(TimelineModel& m, std::uint32_t run) {
  auto a = analyzeRun(m.run(run));
  QVERIFY2(a.ok(), a.ok() ? "" : a.message().c_str());
  m.setAnalysis(run, std::make_shared<const syncopate::analyzer::Analysis>(std::move(a).value()));
}

}  // namespace

class LinksTest : public QObject {
  Q_OBJECT
 private slots:
  void collectiveLinksJoinTheRanksAndNameTheStraggler() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    const Index op = opAt(m.run(0), 0, "AllReduce", us(50));
    auto link = collectiveLink(m, 0, op);
    QVERIFY(link.has_value());
    QCOMPARE_ENUM(link->type, syncopate::trace::CollType::AllReduce);
    QCOMPARE(link->comm_id, 42);
    QCOMPARE(link->seq, 0);
    QVERIFY(link->complete);
    QCOMPARE(link->ends.size(), std::size_t{2});
    QCOMPARE(link->ends[0].comm_rank, 0);
    QCOMPARE(link->ends[0].arrival, us(50));
    QCOMPARE(link->ends[0].waited_ns, us(10));
    QCOMPARE(link->ends[1].arrival, us(60));
    QCOMPARE(link->ends[1].waited_ns, 0);
    QVERIFY(link->ends[0].at.has_value());
    QCOMPARE(m.lane(link->ends[1].at->lane).label, std::string("nccl · dev 0"));
    QCOMPARE(m.lane(link->ends[1].at->lane).rank, Index{1});
    QVERIFY(!link->timing.has_value());  // before the analysis
    QVERIFY(!link->ends[1].last);

    analyse(m, 0);
    link = collectiveLink(m, 0, op);
    QVERIFY(link->timing.has_value());
    QCOMPARE(link->timing->arrival_skew_ns, us(10));
    QCOMPARE(link->timing->lateness_ns, us(10));
    QCOMPARE(link->timing->straggler, Index{1});
    QVERIFY(!link->ends[0].last);
    QVERIFY(link->ends[1].last);
    // The same call seen from the other rank.
    auto other = collectiveLink(m, 0, opAt(m.run(0), 1, "AllReduce", us(60)));
    QCOMPARE(other->match, link->match);
    // Ops that are not collectives have no link.
    QVERIFY(!collectiveLink(m, 0, opAt(m.run(0), 0, "gemm", us(5))).has_value());
  }

  void launchFlowsAreNavigableBothWays() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    const Index gemm = opAt(m.run(0), 0, "gemm", us(105));
    auto call = launchingCall(m, {0, ItemTable::Op, gemm});
    QVERIFY(call.has_value());
    QCOMPARE_ENUM(call->table, ItemTable::ApiCall);
    const auto& model = m.run(0).model;
    QCOMPARE(model.str(model.api_calls.name[call->index]), std::string_view("cudaLaunchKernel"));
    QCOMPARE(model.api_calls.start[call->index], us(101));
    const auto ops = launchedOps(m, *call);
    QCOMPARE(ops.size(), std::size_t{1});
    QCOMPARE(ops[0].index, gemm);
    QVERIFY(!launchingCall(m, {0, ItemTable::Op, opAt(m.run(0), 0, "overlap_a", us(150))}).has_value());
    QVERIFY(launchedOps(m, {0, ItemTable::Op, gemm}).empty());
    // Both ends are on lanes: the thread's and the stream's.
    QCOMPARE_ENUM(m.lane(m.locate(*call)->lane).kind, LaneKind::Thread);
    QCOMPARE_ENUM(m.lane(m.locate(ops[0])->lane).kind, LaneKind::Stream);
  }

  void criticalPathSegmentsLandOnTheirLanes() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    QVERIFY(!criticalPathMarks(m, 0, 1).has_value());  // no analysis yet
    analyse(m, 0);
    QVERIFY(!criticalPathMarks(m, 0, 99).has_value());
    const auto marks = criticalPathMarks(m, 0, 1);
    QVERIFY(marks.has_value());
    QVERIFY(!marks->empty());
    const auto& path = m.analysis(0)->critical_paths.front();
    QCOMPARE(path.iteration, 1);
    QCOMPARE(marks->size(), path.segments.size());
    std::int64_t covered = 0;
    for (std::size_t i = 0; i < marks->size(); ++i) {
      const PathMark& mark = (*marks)[i];
      covered += mark.end - mark.start;
      QCOMPARE(mark.start, path.segments[i].start);
      if (mark.lane) QCOMPARE(m.lane(*mark.lane).rank, mark.rank);
      // GPU ops and API calls on the path are always on a lane.
      if (path.segments[i].node.kind() != syncopate::analyzer::NodeRef::Kind::HostSync) QVERIFY(mark.lane.has_value());
    }
    QCOMPARE(covered, path.length());
  }

  void detailsDescribeTheItem() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    const Index op = opAt(m.run(0), 1, "AllReduce", us(160));
    const ItemDetails d = describeItem(m, {0, ItemTable::Op, op});
    QCOMPARE(d.title, std::string("AllReduce"));
    QCOMPARE(d.value("kind"), std::string("collective"));
    QCOMPARE(d.value("class"), std::string("communication"));
    QCOMPARE(d.value("rank"), std::string("1 on node-b"));
    QCOMPARE(d.value("duration"), std::string("30.00 µs"));
    QCOMPARE(d.value("collective"), std::string("AllReduce"));
    QCOMPARE(d.value("sequence"), std::string("1"));
    QCOMPARE(d.value("count"), std::string("1024 × float32"));
    QCOMPARE(d.value("launch latency"), std::string("14.00 µs"));
    // The sync call on rank 1 says what it blocked on.
    const auto& model = m.run(0).model;
    Index sync = 0;
    for (Index c = 0; c < model.api_calls.size(); ++c)
      if (model.str(model.api_calls.name[c]) == "cudaStreamSynchronize") sync = c;
    const ItemDetails s = describeItem(m, {0, ItemTable::ApiCall, sync});
    QCOMPARE(s.value("blocked on"), std::string("stream for 14.00 µs"));
    QCOMPARE(describeItem(m, {}).title, std::string());
  }
};

QTEST_GUILESS_MAIN(LinksTest)
#include "links_test.moc"

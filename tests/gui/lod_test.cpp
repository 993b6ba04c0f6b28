// Level-of-detail summaries: which items merge at which level, what a block says, which level
// a resolution draws, and that what is drawn is bounded by pixels, not by items.
#include <QtTest>

#include "enum_compare.hpp"

#include <numeric>

#include "syncopate/gui/model/lod.hpp"

using namespace syncopate::gui;

namespace {

struct Items {
  std::vector<std::int64_t> start, end;
  std::vector<VisualKind> kind;
  void add(std::int64_t s, std::int64_t e, VisualKind k = VisualKind::Compute) {
    start.push_back(s);
    end.push_back(e);
    kind.push_back(k);
  }
  LaneLod lod() const { return LaneLod::build(start, end, kind); }
};

}  // namespace

class LodTest : public QObject {
  Q_OBJECT
 private slots:
  void narrowNeighboursMergeIntoOneBlockThatCountsThem() {
    // 100 items of 10 ns, 10 ns apart, then a gap of 10 µs, then one item of 50 µs.
    Items it;
    for (int i = 0; i < 100; ++i) it.add(i * 20, i * 20 + 10);
    it.add(12'000, 62'000);
    const LaneLod lod = it.lod();
    // Level 16 ns: the 10 ns items with 10 ns gaps merge (100 -> 1 block), the wide one stays.
    QVERIFY(!lod.levels().empty());
    const LodLevel& first = lod.levels().front();
    QCOMPARE(first.threshold_ns, 16);
    QCOMPARE(first.blocks.size(), std::size_t{2});
    const LodBlock& merged = first.blocks[0];
    QCOMPARE(merged.count, 100u);
    QCOMPARE(merged.first, 0u);
    QCOMPARE(merged.start, 0);
    QCOMPARE(merged.end, 99 * 20 + 10);
    QCOMPARE(merged.busy_ns, 100 * 10);
    const LodBlock& wide = first.blocks[1];
    QCOMPARE(wide.count, 1u);
    QCOMPARE(wide.first, 100u);
    QCOMPARE(wide.start, 12'000);
  }

  void aGapAsWideAsTheThresholdSeparatesBlocks() {
    Items it;
    it.add(0, 10);
    it.add(20, 30);   // gap 10 < 16: merges at 16 ns
    it.add(100, 110); // gap 70: merges only from 256 ns on
    it.add(120, 130);
    const LaneLod lod = it.lod();
    const LodLevel* l16 = lod.levelFor(16);
    QVERIFY(l16);
    QCOMPARE(l16->threshold_ns, 16);
    QCOMPARE(l16->blocks.size(), std::size_t{2});
    QCOMPARE(l16->blocks[0].count, 2u);
    QCOMPARE(l16->blocks[1].count, 2u);
    // 64 ns: the blocks are 30 ns wide and 70 ns apart: 70 >= 64, still two (a level that does
    // not halve is not kept, so the coarsest kept level at or under 64 is still 16).
    QCOMPARE(lod.levelFor(64)->threshold_ns, 16);
    const LodLevel* l256 = lod.levelFor(300);
    QCOMPARE(l256->threshold_ns, 256);
    QCOMPARE(l256->blocks.size(), std::size_t{1});
    QCOMPARE(l256->blocks[0].count, 4u);
  }

  void wideItemsNeverMerge() {
    Items it;
    for (int i = 0; i < 10; ++i) it.add(i * 1'000'000, i * 1'000'000 + 900'000);
    const LaneLod lod = it.lod();
    // Each item is 900 µs wide: they only merge once the threshold passes 900 µs (at 1,048,576 ns).
    for (const LodLevel& l : lod.levels()) {
      std::uint32_t total = 0;
      for (const LodBlock& b : l.blocks) total += b.count;
      QCOMPARE(total, 10u);  // every level accounts for every item
      if (l.threshold_ns <= 900'000) QCOMPARE(l.blocks.size(), std::size_t{10});
    }
    QVERIFY(lod.levelFor(500'000) == nullptr);  // nothing merged that fine: draw the items
  }

  void mergedBlocksTakeTheKindThatFilledMostOfThem() {
    Items it;
    it.add(0, 10, VisualKind::Compute);
    it.add(12, 14, VisualKind::Communication);
    it.add(15, 27, VisualKind::Communication);  // communication: 14 ns, compute: 10 ns
    const LaneLod lod = it.lod();
    const LodLevel* l = lod.levelFor(16);
    QVERIFY(l);
    QCOMPARE(l->blocks.size(), std::size_t{1});
    QCOMPARE_ENUM(l->blocks[0].kind, VisualKind::Communication);
    QCOMPARE(l->blocks[0].busy_ns, 24);
  }

  void drawnBlocksAreBoundedByPixelsNotItems() {
    // 100,000 items of 100 ns every 150 ns: at 1000 px over the whole 15 ms, 3 px = 45 µs.
    Items it;
    const int n = 100'000;
    for (int i = 0; i < n; ++i) it.add(std::int64_t{i} * 150, std::int64_t{i} * 150 + 100);
    const LaneLod lod = it.lod();
    const double ns_per_px = 15'000'000.0 / 1000;
    const LodLevel* l = lod.levelFor(3 * ns_per_px);
    QVERIFY(l);
    const BlockRange r = visibleBlocks(*l, 0, 15'000'000);
    QVERIFY(r.last - r.first <= 1000);
    std::uint64_t total = 0;
    for (std::size_t i = r.first; i < r.last; ++i) total += l->blocks[i].count;
    QCOMPARE(total, std::uint64_t{n});
    // Kept levels never hold more than half the blocks of the one before.
    std::size_t prev = n;
    for (const LodLevel& lv : lod.levels()) {
      QVERIFY(lv.blocks.size() * 2 <= prev);
      prev = lv.blocks.size();
    }
  }

  void visibleBlocksFindsTheWindow() {
    LodLevel l;
    l.threshold_ns = 16;
    for (int i = 0; i < 10; ++i) l.blocks.push_back({i * 100, i * 100 + 50, 50, static_cast<std::uint32_t>(i), 1, VisualKind::Compute});
    const BlockRange r = visibleBlocks(l, 260, 420);
    // [200,250) ends before 260; [300,350) and [400,450) intersect; [500,...) starts after 420.
    QCOMPARE(r.first, std::size_t{3});
    QCOMPARE(r.last, std::size_t{5});
    const BlockRange edge = visibleBlocks(l, 250, 300);  // half-open: neither touches
    QCOMPARE(edge.first, edge.last);
  }

  void fewItemsNeedNoLevels() {
    Items it;
    it.add(0, 10);
    QVERIFY(it.lod().levels().empty());
    QVERIFY(Items{}.lod().levels().empty());
  }
};

QTEST_GUILESS_MAIN(LodTest)
#include "lod_test.moc"

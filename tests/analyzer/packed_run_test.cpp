// A run loaded from stores packed into bytes (what distributed analysis sends) is the run
// loadRun() loads; a reader that packs store after store into the same buffers packs each as a
// fresh one does; a store that cannot be packed fails with loadRun's sentence, and a store
// that did not arrive leaves the rest, marked partial.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "syncopate/analyzer/analysis.hpp"
#include "syncopate/analyzer/report.hpp"
#include "syncopate/analyzer/run_loader.hpp"
#include "scratch_dir.hpp"
#include "syncopate/trace/run_dir.hpp"

namespace syncopate::analyzer {
namespace {

const std::filesystem::path kFixtures = SYNCOPATE_FIXTURES_DIR;

// A copy of a fixture's input folder: a store opened in place would leave SQLite's -shm and
// -wal files in the source tree (and a read-only checkout cannot take them).
std::filesystem::path copyOfFixture(const testing::ScratchDir& scratch, const std::filesystem::path& relative) {
  const std::filesystem::path copy = scratch / relative.filename().string();
  std::filesystem::copy(kFixtures / relative, copy, std::filesystem::copy_options::recursive);
  return copy;
}

std::vector<trace::StoreFile> storesOf(const std::filesystem::path& dir) {
  auto stores = trace::listStores(dir);
  EXPECT_TRUE(stores.ok()) << stores.message();
  return stores.ok() ? *stores : std::vector<trace::StoreFile>{};
}

nlohmann::json documentOf(const RunModel& model) {
  auto analysis = analyze(model);
  EXPECT_TRUE(analysis.ok()) << analysis.message();
  return analysis.ok() ? analysisToJson(model, *analysis) : nlohmann::json();
}

TEST(PackedRun, RecordedRunEqualsLoadRun) {
  const testing::ScratchDir scratch;
  const std::filesystem::path dir = copyOfFixture(scratch, std::filesystem::path("dp_trainer") / "input");
  const std::vector<trace::StoreFile> stores = storesOf(dir);
  ASSERT_EQ(stores.size(), 2u);
  auto direct = loadRun(dir);
  ASSERT_TRUE(direct.ok()) << direct.message();
  auto packed = loadPackedRun(stores, [&](std::size_t i) { return readPackedStore(stores[i].path); });
  ASSERT_TRUE(packed.ok()) << packed.message();
  EXPECT_EQ(packed->ops.size(), direct->ops.size());
  EXPECT_EQ(packed->diagnostics, direct->diagnostics);
  const nlohmann::json expected = documentOf(*direct);
  ASSERT_FALSE(expected.is_null());
  EXPECT_EQ(documentOf(*packed), expected);
}

// One reader for every store, in the run's order and then the other way round: nothing its
// buffers kept of one store shows in the next one's rows. (The bytes themselves are not compared:
// rows travel as their structs, padding and all.)
TEST(PackedRun, OneReaderPacksStoreAfterStoreAsFreshReadersDo) {
  const testing::ScratchDir scratch;
  const std::filesystem::path dir = copyOfFixture(scratch, std::filesystem::path("dp_trainer") / "input");
  std::vector<trace::StoreFile> stores = storesOf(dir);
  ASSERT_EQ(stores.size(), 2u);
  auto direct = loadRun(dir);
  ASSERT_TRUE(direct.ok()) << direct.message();
  const nlohmann::json expected = documentOf(*direct);
  ASSERT_FALSE(expected.is_null());
  PackedStoreReader reader;
  for (int order = 0; order < 2; ++order) {
    auto packed = loadPackedRun(stores, [&](std::size_t i) { return reader.read(stores[i].path); });
    ASSERT_TRUE(packed.ok()) << packed.message();
    EXPECT_EQ(packed->ops.size(), direct->ops.size());
    EXPECT_EQ(documentOf(*packed), expected) << "stores read in " << (order == 0 ? "the run's order" : "reverse");
    std::reverse(stores.begin(), stores.end());
  }
}

TEST(PackedRun, BrokenStoresFailWithLoadRunsSentence) {
  for (const char* name : {"damaged-page", "foreign-sqlite", "not-sqlite", "schema-3.0", "truncated"}) {
    const testing::ScratchDir scratch;
    const std::filesystem::path dir = copyOfFixture(scratch, std::filesystem::path("broken") / "input" / name);
    auto direct = loadRun(dir);
    ASSERT_FALSE(direct.ok()) << name;
    auto packed = readPackedStore(dir / "rank-0.sqlite");
    ASSERT_FALSE(packed.ok()) << name;
    EXPECT_EQ(packed.message(), direct.message()) << name;
  }
}

TEST(PackedRun, StoreThatDidNotArriveLeavesTheRestMarkedPartial) {
  const testing::ScratchDir scratch;
  const std::filesystem::path dir = copyOfFixture(scratch, std::filesystem::path("dp_trainer") / "input");
  const std::vector<trace::StoreFile> stores = storesOf(dir);
  ASSERT_EQ(stores.size(), 2u);
  auto packed = loadPackedRun(stores, [&](std::size_t i) -> trace::Result<PackedStore> {
    if (i == 1) return trace::failure("process 1 of 2 on node7: its disk is gone");
    return readPackedStore(stores[i].path);
  });
  ASSERT_TRUE(packed.ok()) << packed.message();
  ASSERT_EQ(packed->ranks.size(), 1u);
  EXPECT_EQ(packed->ranks[0].rank, 0);
  ASSERT_FALSE(packed->diagnostics.empty());
  const trace::DiagnosticRow& missing = packed->diagnostics.back();
  EXPECT_EQ(missing.severity, trace::Severity::Error);
  EXPECT_EQ(missing.source, "rank-1.sqlite");
  EXPECT_EQ(missing.message, "the analysis is partial: the store of rank 1 (rank-1.sqlite) could not be read by the "
                             "process it was given to (process 1 of 2 on node7: its disk is gone), so it is missing "
                             "from every figure");
}

TEST(PackedRun, DamagedBytesAreAMissingStoreAndNoStoreLeftIsAFailure) {
  const testing::ScratchDir scratch;
  const std::filesystem::path dir = copyOfFixture(scratch, std::filesystem::path("dp_trainer") / "input");
  const std::vector<trace::StoreFile> stores = storesOf(dir);
  auto whole = readPackedStore(stores[0].path);
  ASSERT_TRUE(whole.ok()) << whole.message();
  PackedStore cut(whole->begin(), whole->begin() + static_cast<std::ptrdiff_t>(whole->size() / 2));
  auto packed = loadPackedRun({stores[0]}, [&](std::size_t) { return trace::Result<PackedStore>(cut); });
  ASSERT_FALSE(packed.ok());
  EXPECT_EQ(packed.message(), "no store of the run could be read: the analysis is partial: the store of rank 0 "
                              "(rank-0.sqlite) could not be read by the process it was given to (its rows arrived damaged (" +
                                  std::to_string(cut.size()) + " bytes that do not decode)), so it is missing from "
                                  "every figure");
}

}  // namespace
}  // namespace syncopate::analyzer

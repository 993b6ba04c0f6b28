// What `syncopate analyze` prints and stores, and `syncopate export` writes, for the straggler
// run of scenarios.hpp, whose every number is known.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <map>

#include "scenarios.hpp"
#include "scratch_dir.hpp"
#include "syncopate/analyzer/chrome_export.hpp"
#include "syncopate/analyzer/report.hpp"

namespace syncopate::analyzer {
namespace {

using nlohmann::json;

struct Fixture {
  RunModel model = testing::straggler();
  Analysis analysis = std::move(analyze(model)).value();
};

TEST(JsonReport, CarriesTheDocumentedFieldsWithExactValues) {
  Fixture f;
  const json doc = analysisToJson(f.model, f.analysis, {.top_kernels = 10, .top_path_ops = 10, .run_dir = "RUN"});
  EXPECT_EQ(doc["schema"], "syncopate.analysis/1");
  EXPECT_EQ(doc["run"]["directory"], "RUN");
  EXPECT_EQ(doc["iterations_source"], "markers");
  ASSERT_EQ(doc["ranks"].size(), 2u);
  const json& r0 = doc["ranks"][0];
  const json& r1 = doc["ranks"][1];
  EXPECT_EQ(r0["rank"], 0);
  EXPECT_EQ(r1["rank"], 1);
  EXPECT_DOUBLE_EQ(r0["iteration_time_ms"], 0.080);
  EXPECT_DOUBLE_EQ(r0["compute_ms"], 0.050);
  EXPECT_DOUBLE_EQ(r0["communication_ms"], 0.030);
  EXPECT_DOUBLE_EQ(r0["overlapped_communication_ms"], 0.0);
  EXPECT_DOUBLE_EQ(r0["exposed_communication_ms"], 0.030);
  EXPECT_DOUBLE_EQ(r0["overlap_ratio"], 0.0);
  EXPECT_DOUBLE_EQ(r0["idle_ms"], 0.0);
  EXPECT_DOUBLE_EQ(r0["collective_wait_ms"], 0.015);
  EXPECT_DOUBLE_EQ(r1["compute_ms"], 0.065);
  EXPECT_DOUBLE_EQ(r1["exposed_communication_ms"], 0.015);
  EXPECT_EQ(r1["collectives"]["times_last"], 1);
  const json& agg = doc["aggregate"];
  EXPECT_DOUBLE_EQ(agg["iteration_time_ms"], 0.080);
  EXPECT_DOUBLE_EQ(agg["compute_ms"], 0.0575);
  EXPECT_DOUBLE_EQ(agg["communication_ms"], 0.0225);
  EXPECT_DOUBLE_EQ(agg["exposed_communication_ms"], 0.0225);
  EXPECT_DOUBLE_EQ(agg["overlap_ratio"], 0.0);
  EXPECT_DOUBLE_EQ(agg["idle_ms"], 0.0);
  ASSERT_EQ(doc["iterations"].size(), 1u);
  EXPECT_EQ(doc["iterations"][0]["iteration"], 0);
  EXPECT_DOUBLE_EQ(doc["iterations"][0]["duration_ms"], 0.080);
  EXPECT_EQ(doc["iterations"][0]["ranks"].size(), 2u);
  const json& cp = doc["critical_path"];
  EXPECT_EQ(cp["iterations"], 1);
  EXPECT_DOUBLE_EQ(cp["length_ms"], 0.080);
  EXPECT_DOUBLE_EQ(cp["attribution"]["straggler_wait_ms"], 0.015);
  EXPECT_DOUBLE_EQ(cp["attribution"]["compute_ms"], 0.050);
  EXPECT_DOUBLE_EQ(cp["attribution_fraction"]["straggler_wait"], 15.0 / 80.0);
  EXPECT_EQ(doc["collectives"]["straggler"]["rank"], 1);
  EXPECT_DOUBLE_EQ(doc["collectives"]["straggler"]["lateness_ms"], 0.015);
  ASSERT_EQ(doc["collectives"]["by_type"].size(), 1u);
  EXPECT_EQ(doc["collectives"]["by_type"][0]["type"], "AllReduce");
  EXPECT_DOUBLE_EQ(doc["collectives"]["by_type"][0]["mean_busbw_gbps"], 100.0);
  EXPECT_EQ(doc["kernels"]["top"][0]["name"], "compute");
}

TEST(TextReport, HeadlineNumbersFirst) {
  Fixture f;
  const std::string text = analysisToText(f.model, f.analysis, {.top_kernels = 5, .top_path_ops = 5, .run_dir = "RUN"});
  EXPECT_NE(text.find("Run RUN: 2 rank(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("iteration time               0.080 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("straggler: rank 1 arrived last in 1 of 1 complete collectives"), std::string::npos) << text;
  EXPECT_LT(text.find("iteration time"), text.find("Top ops"));
}

TEST(ResultsStore, WritesJsonAndTablesIntoTheRunDirectory) {
  Fixture f;
  testing::ScratchDir dir;
  const json doc = analysisToJson(f.model, f.analysis);
  ASSERT_TRUE(writeAnalysisResults(dir.path(), f.model, f.analysis, doc).ok());
  std::ifstream in(dir / "analysis.json");
  EXPECT_EQ(json::parse(in), doc);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir / "analysis.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto count = [&](const char* sql) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &s, nullptr), SQLITE_OK) << sql;
    EXPECT_EQ(sqlite3_step(s), SQLITE_ROW);
    const std::int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
  };
  EXPECT_EQ(count("SELECT count(*) FROM iterations"), 2);
  EXPECT_EQ(count("SELECT compute_ns FROM iterations WHERE rank_row = 1"), 65000);
  EXPECT_EQ(count("SELECT count(*) FROM critical_path"), 4);
  EXPECT_EQ(count("SELECT end_ns - start_ns FROM critical_path WHERE category = 'straggler_wait'"), 15000);
  EXPECT_EQ(count("SELECT straggler_rank_row FROM collectives"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM collective_participants"), 2);
  EXPECT_EQ(count("SELECT wait_ns FROM collective_participants WHERE rank_row = 0"), 15000);
  EXPECT_EQ(count("SELECT count(*) FROM meta WHERE key = 'schema_version' AND value = '1.1'"), 1);
  sqlite3_close(db);
  // Writing again replaces the results.
  ASSERT_TRUE(writeAnalysisResults(dir.path(), f.model, f.analysis, doc).ok());
  EXPECT_FALSE(std::filesystem::exists(dir / "analysis.sqlite.tmp"));
}

TEST(ResultsStore, UnwritableDirectoryIsAnError) {
  Fixture f;
  auto s = writeAnalysisResults("/proc/no-such-dir", f.model, f.analysis, analysisToJson(f.model, f.analysis));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot"), std::string::npos);
}

TEST(ChromeExport, ProcessesTracksSlicesAndFlows) {
  Fixture f;
  testing::ScratchDir dir;
  auto stats = exportChromeTrace(f.model, &f.analysis, dir / "trace.json");
  ASSERT_TRUE(stats.ok()) << stats.message();
  std::ifstream in(dir / "trace.json");
  const json doc = json::parse(in);
  std::map<std::string, int> phases;
  std::map<std::string, int> slice_cats;
  for (const json& e : doc["traceEvents"]) {
    ++phases[e["ph"].get<std::string>()];
    if (e["ph"] == "X") ++slice_cats[e["cat"].get<std::string>()];
  }
  // 6 ops + 6 API calls + 2 step ranges + 4 critical path segments.
  EXPECT_EQ(phases["X"], 18);
  EXPECT_EQ(slice_cats["compute"], 4 + 2);        // 4 kernels, 2 compute path segments
  EXPECT_EQ(slice_cats["communication"], 2 + 1);  // 2 all-reduces, 1 path segment
  EXPECT_EQ(slice_cats["straggler_wait"], 1);
  // 6 launches and one arrow from the late rank's all-reduce to the other's.
  EXPECT_EQ(phases["s"], 7);
  EXPECT_EQ(phases["f"], 7);
  EXPECT_EQ(stats->flows, 7u);
  // Times are microseconds from the first event, with nanosecond decimals.
  bool found = false;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "compute" && e["pid"] == 1) {
      EXPECT_DOUBLE_EQ(e["ts"], 5.0);
      EXPECT_DOUBLE_EQ(e["dur"], 55.0);
      found = true;
    }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace syncopate::analyzer

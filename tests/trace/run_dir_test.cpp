#include "syncopate/trace/run_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "temp_dir.hpp"

namespace syncopate::trace {
namespace {

using testing::TempDir;

void touch(const std::filesystem::path& file) { std::ofstream(file) << ""; }

TEST(RunDir, StoreNames) {
  EXPECT_EQ(rankStoreName(12), "rank-12.sqlite");
  EXPECT_EQ(pidStoreName(4242), "pid-4242.sqlite");
}

TEST(RunDir, ListsStoresRanksFirstAndSkipsEverythingElse) {
  TempDir dir;
  for (const char* name : {"rank-10.sqlite", "rank-2.sqlite", "pid-77.sqlite", "pid-5.sqlite", "rank-0.sqlite",
                           "rank-0.sqlite-wal", "rank-0.sqlite-shm", "meta.json", "analysis.json", "rank-x.sqlite",
                           "rank-.sqlite", "rank-3.sqlite.tmp", "pid-1.db"}) {
    touch(dir / name);
  }
  std::filesystem::create_directory(dir / "rank-4.sqlite");  // a directory is not a store
  auto stores = listStores(dir.path());
  ASSERT_TRUE(stores.ok()) << stores.message();
  std::vector<std::string> names;
  for (const auto& s : *stores) names.push_back(s.path.filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"rank-0.sqlite", "rank-2.sqlite", "rank-10.sqlite", "pid-5.sqlite",
                                             "pid-77.sqlite"}));
  EXPECT_EQ((*stores)[2].rank, 10);
  EXPECT_FALSE((*stores)[2].pid.has_value());
  EXPECT_EQ((*stores)[4].pid, 77);
}

TEST(RunDir, ListingSomethingElseIsAnError) {
  TempDir dir;
  auto missing = listStores(dir / "nope");
  EXPECT_EQ(missing.code(), StatusCode::NotFound);
  EXPECT_NE(missing.message().find("is not a directory"), std::string::npos);
}

TEST(RunDir, MetaJsonRoundTripsAndKeepsUnknownKeys) {
  TempDir dir;
  RunMeta meta;
  meta.tool_version = "0.1.0";
  meta.command = {"mpirun", "-np", "4", "dp_trainer", "--mode=overlap", "a b"};
  meta.hosts = {"node-1", "node-2"};
  meta.start_unix_ns = 1'700'000'000'123'456'789;
  meta.backend = "events";
  meta.backend_reason = "CUPTI is held by another tool";
  meta.extra_json = {{"armed", "true"}, {"attach", "{\"iterations\":5}"}};
  ASSERT_TRUE(writeRunMeta(dir.path(), meta).ok());
  EXPECT_FALSE(std::filesystem::exists(dir / "meta.json.tmp"));

  auto back = readRunMeta(dir.path());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->tool_version, meta.tool_version);
  EXPECT_EQ(back->command, meta.command);
  EXPECT_EQ(back->hosts, meta.hosts);
  EXPECT_EQ(back->start_unix_ns, meta.start_unix_ns);
  EXPECT_EQ(back->backend, meta.backend);
  EXPECT_EQ(back->backend_reason, meta.backend_reason);
  EXPECT_EQ(back->source, "record");
  EXPECT_EQ(back->extra_json, meta.extra_json);

  std::ifstream in(dir / "meta.json");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  EXPECT_NE(text.find("\"start_time\": \"2023-11-14T22:13:20.123456789Z\""), std::string::npos) << text;
}

// meta.json is written through a temporary beside it; a symbolic link planted under the
// temporary's name is refused, and the file it points at is untouched.
TEST(RunDir, MetaJsonIsNeverWrittenThroughAPlantedSymbolicLink) {
  TempDir dir;
  const auto precious = dir.path() / "precious.txt";
  std::ofstream(precious) << "keep me";
  const auto run_dir = dir.path() / "run";
  std::filesystem::create_directory(run_dir);
  std::filesystem::create_symlink(precious, run_dir / "meta.json.tmp");
  RunMeta meta;
  meta.command = {"train"};
  const Status written = writeRunMeta(run_dir, meta);
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.message().find("it is a symbolic link"), std::string::npos) << written.message();
  std::ifstream in(precious);
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "keep me");
}

TEST(RunDir, BadMetaJsonIsExplained) {
  TempDir dir;
  EXPECT_EQ(readRunMeta(dir.path()).code(), StatusCode::NotFound);
  const auto expectBad = [&](const std::string& content, const std::string& phrase) {
    std::ofstream(dir / "meta.json") << content;
    auto meta = readRunMeta(dir.path());
    EXPECT_EQ(meta.code(), StatusCode::InvalidArgument) << content;
    EXPECT_NE(meta.message().find(phrase), std::string::npos) << meta.message();
  };
  expectBad("{\"format\": ", "is not valid JSON");
  expectBad("[1, 2]", "is not a JSON object");
  expectBad("{\"version\": 1}", "is not a Syncopate run's meta.json");
  expectBad("{\"format\": \"syncopate-run\", \"version\": 9}", "has version 9, this syncopate reads up to 1");
  expectBad("{\"format\": \"syncopate-run\", \"version\": 1, \"command\": \"train.py\"}", "not an array of strings");
  RunMeta clash;
  clash.extra_json = {{"hosts", "[]"}};
  EXPECT_EQ(writeRunMeta(dir.path(), clash).code(), StatusCode::InvalidArgument);
  RunMeta invalid;
  invalid.extra_json = {{"x", "{not json"}};
  EXPECT_EQ(writeRunMeta(dir.path(), invalid).code(), StatusCode::InvalidArgument);
}

}  // namespace
}  // namespace syncopate::trace

// A full disk is a Status, never a crash: the batch that could not be written is counted as
// lost, and the writer goes on once there is room again.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "failing_vfs.hpp"
#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/writer.hpp"
#include "kernel_ops_test.hpp"

namespace syncopate::trace {
namespace {

using testing::FullDiskVfs;

using DiskFull = testing::KernelOpsTest;

TEST_F(DiskFull, AFullDiskLosesOneBatchAndTheWriterRecovers) {
  FullDiskVfs vfs;
  auto writer = StoreWriter::createFile(dir / "s.sqlite", {}, catalog);
  ASSERT_TRUE(writer.ok()) << writer.message();
  StoreWriter& w = **writer;
  ASSERT_TRUE(w.append(kNoThread, ops(1, 1000)).ok());
  ASSERT_TRUE(w.flush().ok());

  vfs.setBudget(0);
  // 20000 rows fit in the page cache, so the disk is first touched by the commit.
  ASSERT_TRUE(w.append(kNoThread, ops(1001, 20000)).ok());
  const Status status = w.flush();
  EXPECT_EQ(status.code(), StatusCode::DiskFull) << status.message();
  EXPECT_NE(status.message().find("s.sqlite"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("free some space"), std::string::npos) << status.message();
  EXPECT_GT(vfs.refusedWrites(), 0u);
  EXPECT_EQ(w.stats().rows_lost, 20000u);

  vfs.setBudget(-1);
  ASSERT_TRUE(w.append(kNoThread, ops(21001, 500)).ok());
  ASSERT_TRUE(w.flush().ok());
  ASSERT_TRUE(w.close().ok());

  auto reader = StoreReader::open(dir / "s.sqlite");
  ASSERT_TRUE(reader.ok()) << reader.message();
  ASSERT_TRUE(reader->checkIntegrity().ok());
  std::int64_t ops_read = 0, from_lost_batch = 0;
  ASSERT_TRUE(reader->forEachOp([&](const OpRow& op) {
    ++ops_read;
    if (*op.correlation_id > 1000 && *op.correlation_id <= 21000) ++from_lost_batch;
  }).ok());
  EXPECT_EQ(ops_read, 1500);
  EXPECT_EQ(from_lost_batch, 0);
  std::map<std::string, std::int64_t> counters;
  ASSERT_TRUE(reader->forEachCounter([&](const CounterRow& c) { counters[c.name] = c.value; }).ok());
  EXPECT_EQ(counters["rows_lost"], 20000);
  EXPECT_EQ(counters["failed_flushes"], 1);
  bool said = false;
  ASSERT_TRUE(reader->forEachDiagnostic([&](const DiagnosticRow& d) {
    said = said || (d.message.find("could not be written") != std::string::npos && d.count == 20000);
  }).ok());
  EXPECT_TRUE(said);
}

TEST_F(DiskFull, CreatingOnAFullDiskLeavesNoFile) {
  FullDiskVfs vfs;
  vfs.setBudget(0);
  auto writer = StoreWriter::create(dir.path(), {"h", 77, std::nullopt, "record"}, catalog);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.code(), StatusCode::DiskFull) << writer.message();
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace syncopate::trace

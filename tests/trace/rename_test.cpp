// pid-<P>.sqlite becomes rank-<R>.sqlite once the rank is known, with nothing left behind
// under the old name and the writer carrying on in the new file.
#include <gtest/gtest.h>

#include <vector>

#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/run_dir.hpp"
#include "syncopate/trace/writer.hpp"
#include "kernel_ops_test.hpp"

namespace syncopate::trace {
namespace {

std::vector<std::string> filesIn(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

using RenameTest = testing::KernelOpsTest;

TEST_F(RenameTest, PidStoreBecomesRankStore) {
  auto writer = StoreWriter::create(dir.path(), {"h", 4242, std::nullopt, "record"}, catalog);
  ASSERT_TRUE(writer.ok()) << writer.message();
  StoreWriter& w = **writer;
  ASSERT_TRUE(w.append(kNoThread, ops(1, 100)).ok());  // some flushed, some not
  ASSERT_TRUE(w.flush().ok());
  ASSERT_TRUE(w.append(kNoThread, ops(101, 50)).ok());

  ASSERT_TRUE(w.setRank(3).ok());
  EXPECT_EQ(w.path(), dir / "rank-3.sqlite");
  // Nothing is left under the old name (the reopened store has its own -wal and -shm).
  EXPECT_EQ(filesIn(dir.path()),
            (std::vector<std::string>{"rank-3.sqlite", "rank-3.sqlite-shm", "rank-3.sqlite-wal"}));

  ASSERT_TRUE(w.append(kNoThread, ops(151, 25)).ok());
  ASSERT_TRUE(w.flush().ok());
  {
    auto reader = StoreReader::open(dir / "rank-3.sqlite");
    ASSERT_TRUE(reader.ok()) << reader.message();
    EXPECT_EQ(reader->rank(), 3);
    EXPECT_EQ(*reader->rowCount(Table::Ops), 175);
    EXPECT_EQ(*reader->rowCount(Table::Strings), catalog.stringCount());  // not written twice
  }

  EXPECT_TRUE(w.setRank(3).ok());  // already so
  EXPECT_EQ(w.setRank(4).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(w.setRank(-1).code(), StatusCode::InvalidArgument);
  ASSERT_TRUE(w.close().ok());
  // The last connection to close folds the WAL into the file and removes it.
  EXPECT_EQ(filesIn(dir.path()), (std::vector<std::string>{"rank-3.sqlite"}));

  auto stores = listStores(dir.path());
  ASSERT_TRUE(stores.ok());
  ASSERT_EQ(stores->size(), 1u);
  EXPECT_EQ((*stores)[0].rank, 3);
}

TEST_F(RenameTest, ATakenRankKeepsThePidName) {
  Catalog other;
  auto existing = StoreWriter::create(dir.path(), {"h", 1, 0, "record"}, other);
  ASSERT_TRUE(existing.ok());
  ASSERT_TRUE((*existing)->close().ok());

  auto writer = StoreWriter::create(dir.path(), {"h", 2, std::nullopt, "record"}, catalog);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->append(kNoThread, ops(1, 10)).ok());
  const Status s = (*writer)->setRank(0);
  EXPECT_EQ(s.code(), StatusCode::AlreadyExists);
  EXPECT_NE(s.message().find("keeps its pid name"), std::string::npos) << s.message();
  EXPECT_EQ((*writer)->path(), dir / "pid-2.sqlite");
  // Still writing, into the pid store, which records the rank in its meta.
  ASSERT_TRUE((*writer)->append(kNoThread, ops(11, 5)).ok());
  ASSERT_TRUE((*writer)->close().ok());
  auto reader = StoreReader::open(dir / "pid-2.sqlite");
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(*reader->rowCount(Table::Ops), 15);
  EXPECT_EQ(reader->rank(), 0);
  auto original = StoreReader::open(dir / "rank-0.sqlite");
  ASSERT_TRUE(original.ok());
  EXPECT_EQ(*original->rowCount(Table::Ops), 0);
}

TEST_F(RenameTest, AStoreCreatedUnderItsOwnNameKeepsIt) {
  auto writer = StoreWriter::createFile(dir / "imported.sqlite", {"h", 9, std::nullopt, "import-nsys"}, catalog);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->setRank(5).ok());
  EXPECT_EQ((*writer)->path(), dir / "imported.sqlite");
  ASSERT_TRUE((*writer)->close().ok());
  auto reader = StoreReader::open(dir / "imported.sqlite");
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->rank(), 5);
}

}  // namespace
}  // namespace syncopate::trace

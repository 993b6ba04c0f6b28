// A store's WAL is folded into its main file by a thread of the store's own, not by the writer's
// flushes: while a writer is open, a thread named syncopate-wal runs and the main file grows
// past what the writer put there at creation; once it is closed the thread is gone and every
// row flushed is in the store.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/writer.hpp"
#include "temp_dir.hpp"

namespace syncopate::trace {
namespace {

using testing::TempDir;

int threadsNamed(const std::string& name) {
  int count = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ++count;
  }
  return count;
}

TEST(WalCheckpoint, TheStoresOwnThreadFoldsTheWalInWhileTheWriterWrites) {
  constexpr int kOpsPerBatch = 5000;
  constexpr int kBatches = 200;  // about 30 MB of rows: SQLite's 1 000 pages of WAL, several times
  TempDir dir;
  const int before = threadsNamed("syncopate-wal");
  Catalog catalog;
  const StreamId stream = catalog.registerStream({0, 0, std::nullopt, std::nullopt, kNoString});
  const ThreadId thread = catalog.registerThread({::getpid(), catalog.intern("main")});
  const ShapeId shape = catalog.internShape({catalog.intern("kernel"), {}, {}});
  auto writer = StoreWriter::create(dir.path(), {"h", ::getpid(), 0, "record"}, catalog);
  ASSERT_TRUE(writer.ok()) << writer.message();
  EXPECT_EQ(threadsNamed("syncopate-wal"), before + 1);
  const std::filesystem::path store = (*writer)->path();
  const auto created_bytes = std::filesystem::file_size(store);

  std::vector<Record> batch(2 * kOpsPerBatch);
  for (std::uint32_t b = 0; b < kBatches; ++b) {
    for (int i = 0; i < kOpsPerBatch; ++i) {
      const std::uint32_t correlation = b * kOpsPerBatch + i + 1;
      ApiCallRecord call;
      call.name_id = catalog.intern("cudaLaunchKernel");
      call.correlation_id = correlation;
      call.start_ns = correlation * 1000;
      call.end_ns = call.start_ns + 200;
      batch[2 * i] = call;
      batch[2 * i + 1] = OpRecord::launch(OpKind::Kernel, stream, correlation, shape, call.start_ns + 5000,
                                          call.start_ns + 9000);
    }
    ASSERT_TRUE((*writer)->append(thread, batch).ok());
    ASSERT_TRUE((*writer)->flush().ok());
  }
  // The fold runs beside the writer: wait for it (the writer itself never checkpoints while open).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::filesystem::file_size(store) < created_bytes + (4u << 20) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(std::filesystem::file_size(store), created_bytes + (4u << 20))
      << "nothing of the WAL reached the main file while the writer was open";

  ASSERT_TRUE((*writer)->close().ok());
  EXPECT_EQ(threadsNamed("syncopate-wal"), before);
  EXPECT_FALSE(std::filesystem::exists(store.string() + "-wal")) << "the WAL outlived the store's close";
  auto reader = StoreReader::open(store);
  ASSERT_TRUE(reader.ok()) << reader.message();
  ASSERT_TRUE(reader->checkIntegrity().ok());
  EXPECT_EQ(*reader->rowCount(Table::Ops), kBatches * kOpsPerBatch);
  EXPECT_EQ(*reader->rowCount(Table::ApiCalls), kBatches * kOpsPerBatch);
}

}  // namespace
}  // namespace syncopate::trace

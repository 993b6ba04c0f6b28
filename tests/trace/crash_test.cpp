// A process killed with SIGKILL while recording leaves a store that opens cleanly and holds
// exactly the batches it flushed: whole batches, never part of one. So does one killed after
// its store's WAL has been folded into the main file several times (by the store's own thread,
// which may be in the middle of it).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "syncopate/trace/reader.hpp"
#include "syncopate/trace/writer.hpp"
#include "temp_dir.hpp"

namespace syncopate::trace {
namespace {

using testing::TempDir;

constexpr int kOpsPerBatch = 5000;

// The child: writes batches forever, telling the parent after each flush returns.
[[noreturn]] void recordUntilKilled(const std::filesystem::path& dir, int ack_fd) {
  Catalog catalog;
  const StreamId stream = catalog.registerStream({0, 0, std::nullopt, std::nullopt, kNoString});
  const ThreadId thread = catalog.registerThread({::getpid(), catalog.intern("child")});
  auto writer = StoreWriter::create(dir, {"h", ::getpid(), 0, "record"}, catalog);
  if (!writer.ok()) _exit(2);
  std::vector<Record> batch(2 * kOpsPerBatch);
  for (std::uint32_t b = 0;; ++b) {
    // Each batch interns a new name, so strings grow with the batches too.
    const ShapeId shape = catalog.internShape({catalog.intern("kernel_of_batch_" + std::to_string(b)), {}, {}});
    for (int i = 0; i < kOpsPerBatch; ++i) {
      const std::uint32_t correlation = b * kOpsPerBatch + i + 1;
      ApiCallRecord call;
      call.name_id = catalog.intern("cudaLaunchKernel");
      call.correlation_id = correlation;
      batch[2 * i] = call;
      batch[2 * i + 1] = OpRecord::launch(OpKind::Kernel, stream, correlation, shape, i, i + 1);
    }
    if (!(*writer)->append(thread, batch).ok() || !(*writer)->flush().ok()) _exit(3);
    const char ack = 'f';
    if (write(ack_fd, &ack, 1) != 1) _exit(4);
  }
}

// Kills the recording child once it has flushed `flushes` batches and checks what it left.
void killAfterFlushesAndRead(int flushes) {
  TempDir dir;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    recordUntilKilled(dir.path(), fds[1]);
  }
  close(fds[1]);
  int acks = 0;
  char c;
  while (acks < flushes && read(fds[0], &c, 1) == 1) ++acks;
  ASSERT_EQ(acks, flushes) << "the child stopped before flush " << flushes;
  kill(child, SIGKILL);  // most likely in the middle of the next batch
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  close(fds[0]);

  // The WAL of the dead writer is still there; the reader recovers it read-only.
  auto reader = StoreReader::open(dir / "rank-0.sqlite");
  ASSERT_TRUE(reader.ok()) << reader.message();
  ASSERT_TRUE(reader->checkIntegrity().ok());
  const std::int64_t ops = *reader->rowCount(Table::Ops);
  EXPECT_EQ(ops % kOpsPerBatch, 0) << "a batch was committed in part";
  const std::int64_t batches = ops / kOpsPerBatch;
  EXPECT_GE(batches, flushes);
  EXPECT_EQ(*reader->rowCount(Table::ApiCalls), ops);
  // Every op's name arrived with it.
  std::int64_t unnamed = 0, checked = 0;
  ASSERT_TRUE(reader->forEachOp([&](const OpRow& op) {
    const auto expected = "kernel_of_batch_" + std::to_string((*op.correlation_id - 1) / kOpsPerBatch);
    if (reader->string(op.name_id) != expected) ++unnamed;
    ++checked;
  }).ok());
  EXPECT_EQ(checked, ops);
  EXPECT_EQ(unnamed, 0);
  EXPECT_FALSE(reader->metaValue("end_ns").has_value());  // never closed
}

TEST(Crash, SigkillLeavesEverythingFlushedReadable) { killAfterFlushesAndRead(4); }

// 200 batches are about 30 MB of rows: the WAL passes SQLite's 1 000 pages more than once.
TEST(Crash, SigkillAfterTheWalWasFoldedInLeavesEverythingFlushedReadable) { killAfterFlushesAndRead(200); }

}  // namespace
}  // namespace syncopate::trace

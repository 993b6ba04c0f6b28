// Folds a store's WAL into its main file on a thread of its own, so that the writer never waits
// for it.
//
// SQLite checkpoints in the connection that commits, once the WAL holds 1 000 pages: it copies
// them into the main file and, with synchronous=NORMAL, syncs both files. For a recording at a
// million launches a second that is a 16 MB copy and two fsyncs every half second, 20-70 ms
// during which the writer drains nothing and the threads' rings overflow. Here the writer's
// connection only appends to the WAL; after a commit that leaves kPagesBeforeCheckpoint pages or
// more in it, this thread's own connection runs a passive checkpoint (which never blocks the
// writer), and the writer's next transaction starts the WAL over once it has all been copied.
// Should the thread fall behind a writer that commits without pause (the WAL restarts only once
// a checkpoint has caught up with it), the writer folds the WAL in itself past
// kPagesTheWriterFolds, as SQLite would have every 1 000: the WAL stays bounded.
// Durability is unchanged: commits survive the process's death, and the main file is synced
// before the WAL is reused.
#pragma once

#include <sqlite3.h>

#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

namespace syncopate::trace::detail {

class WalCheckpointer {
 public:
  // SQLite's own threshold (SQLITE_DEFAULT_WAL_AUTOCHECKPOINT).
  static constexpr int kPagesBeforeCheckpoint = 1000;
  static constexpr int kPagesTheWriterFolds = 16 * kPagesBeforeCheckpoint;  // 256 MB of 16 KiB pages

  // Checkpoints `file` for `writer` (a connection in WAL mode) from now on: replaces the writer's
  // automatic checkpoints. nullptr when no connection or thread can be had (then the writer's
  // connection goes on checkpointing as SQLite does by default).
  static std::unique_ptr<WalCheckpointer> start(const std::filesystem::path& file, sqlite3* writer);

  // Stops the thread (after the checkpoint it may be running) and gives the writer its automatic
  // checkpoints back.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Held by whoever checkpoints the store otherwise (the writer's TRUNCATE before a rename or at
  // close), so that the two never run at once.
  std::mutex& checkpointMutex() noexcept { return checkpoint_mutex_; }

 private:
  WalCheckpointer(sqlite3* writer, sqlite3* own) noexcept : writer_(writer), own_(own) {}
  static int afterCommit(void* self, sqlite3*, const char*, int pages) noexcept;
  void run() noexcept;

  sqlite3* const writer_;
  sqlite3* const own_;
  std::mutex checkpoint_mutex_;
  std::mutex mutex_;  // guards due_ and stop_
  std::condition_variable wake_;
  bool due_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace syncopate::trace::detail

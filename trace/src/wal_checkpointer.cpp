#include "wal_checkpointer.hpp"

#include <pthread.h>

namespace syncopate::trace::detail {

std::unique_ptr<WalCheckpointer> WalCheckpointer::start(const std::filesystem::path& file, sqlite3* writer) {
  sqlite3* own = nullptr;
  // A connection finds the WAL when it first reads the file; a checkpoint before that would find
  // no WAL to fold and do nothing.
  if (sqlite3_open_v2(file.c_str(), &own, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK ||
      sqlite3_exec(own, "SELECT 1 FROM sqlite_schema LIMIT 1;", nullptr, nullptr, nullptr) != SQLITE_OK) {
    sqlite3_close_v2(own);
    return nullptr;
  }
  std::unique_ptr<WalCheckpointer> checkpointer(new (std::nothrow) WalCheckpointer(writer, own));
  if (!checkpointer) {
    sqlite3_close_v2(own);
    return nullptr;
  }
  try {
    checkpointer->thread_ = std::thread([c = checkpointer.get()] { c->run(); });
  } catch (...) {
    sqlite3_close_v2(own);
    return nullptr;  // the destructor finds no thread and leaves the writer's checkpoints alone
  }
  sqlite3_wal_hook(writer, &WalCheckpointer::afterCommit, checkpointer.get());
  return checkpointer;
}

WalCheckpointer::~WalCheckpointer() {
  if (!thread_.joinable()) return;
  sqlite3_wal_autocheckpoint(writer_, kPagesBeforeCheckpoint);  // also removes afterCommit
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  sqlite3_close_v2(own_);
}

int WalCheckpointer::afterCommit(void* self, sqlite3* writer, const char*, int pages) noexcept {
  if (pages < kPagesBeforeCheckpoint) return SQLITE_OK;
  auto* checkpointer = static_cast<WalCheckpointer*>(self);
  if (pages >= kPagesTheWriterFolds) {
    // Between transactions the writer holds nothing back: after the thread's checkpoint, this one
    // copies the whole WAL, and the next transaction starts it over.
    std::lock_guard checkpointing(checkpointer->checkpoint_mutex_);
    (void)sqlite3_wal_checkpoint_v2(writer, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    return SQLITE_OK;
  }
  {
    std::lock_guard lock(checkpointer->mutex_);
    checkpointer->due_ = true;
  }
  checkpointer->wake_.notify_one();
  return SQLITE_OK;
}

void WalCheckpointer::run() noexcept {
  pthread_setname_np(pthread_self(), "syncopate-wal");
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return due_ || stop_; });
    if (stop_) return;
    due_ = false;
    lock.unlock();
    {
      // Passive: copies what no transaction of the writer still needs, never waits for it. A
      // failure (a full disk) leaves the WAL longer; the next commit past the threshold retries,
      // and the writer's own checkpoint at close reports it.
      std::lock_guard checkpointing(checkpoint_mutex_);
      (void)sqlite3_wal_checkpoint_v2(own_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    }
    lock.lock();
  }
}

}  // namespace syncopate::trace::detail

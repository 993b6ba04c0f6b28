// The concurrent table behind every Catalog registry: byte-string keys mapped to dense ids
// 1, 2, 3..., each with a fixed-size value.
//
// Readers never lock: find() probes an open-addressing index of ids. The index is filled
// before it is published (release) and a slot, once set, never changes; when the index
// needs to grow, a complete bigger copy is published and the old one is kept alive until the
// table dies (geometric growth: at most twice the final size in total). So a lookup is
// wait-free — it stops at an empty slot, and the load factor stays at or below 1/2. A reader
// that races with an insertion may miss the newest key; it then takes the insert path, which
// re-checks under the mutex.
//
// Entries (key pointer, length, hash, value) live in chunks that double in size and never
// move, so an id's entry address is stable; keys live in an arena of blocks that never move.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

namespace syncopate::trace::detail {

std::uint64_t hashBytes(const void* data, std::size_t size) noexcept;

class InternTable {
 public:
  // `value_size`: bytes of value stored with each entry (0 for a plain set of keys).
  explicit InternTable(std::size_t value_size) noexcept;
  ~InternTable();
  InternTable(const InternTable&) = delete;
  InternTable& operator=(const InternTable&) = delete;

  // 0 when `key` is not (yet visibly) in the table. Wait-free.
  std::uint32_t find(std::string_view key) const noexcept;

  // The id of `key`, inserting it with a copy of `value` (value_size bytes, may be null for
  // value_size 0) when absent. `inserted` tells which. 0 when memory ran out.
  std::uint32_t insert(std::string_view key, const void* value, bool& inserted) noexcept;

  // Runs `update(value)` under the insertion mutex for an existing id (values that readers
  // may read concurrently must be updated atomically by `update`).
  template <class Update>
  void updateValue(std::uint32_t id, Update&& update) noexcept {
    std::lock_guard lock(mutex_);
    update(valueOf(id));
  }

  // Published entries are 1..size().
  std::uint32_t size() const noexcept { return published_.load(std::memory_order_acquire); }
  std::string_view key(std::uint32_t id) const noexcept;
  // Precondition: 1 <= id <= size(). Aligned to 8 bytes.
  const std::byte* value(std::uint32_t id) const noexcept;
  std::byte* mutableValue(std::uint32_t id) noexcept;

 private:
  struct Entry {
    const char* key;
    std::uint32_t key_size;
    std::uint32_t pad;
    std::uint64_t hash;
    // value bytes follow
  };
  struct Index {
    std::uint32_t mask;
    std::unique_ptr<std::atomic<std::uint32_t>[]> slots;
  };
  static constexpr std::size_t kFirstChunk = 256;  // entries in chunk 0; chunk c holds 256 << c
  static constexpr std::size_t kMaxChunks = 24;    // > 2^32 entries in all
  static constexpr std::size_t kArenaBlock = 64 * 1024;

  Entry* entryAt(std::uint32_t id) const noexcept;
  std::byte* valueOf(std::uint32_t id) const noexcept;
  std::uint32_t findIn(const Index* index, std::string_view key, std::uint64_t hash) const noexcept;
  static void place(Index& index, std::uint32_t id, std::uint64_t hash) noexcept;
  const char* storeKey(std::string_view key) noexcept;  // under mutex_; null when out of memory
  bool growIndex() noexcept;                              // under mutex_

  const std::size_t value_size_;
  const std::size_t stride_;

  std::atomic<std::byte*> chunks_[kMaxChunks] = {};
  std::atomic<Index*> index_{nullptr};
  std::atomic<std::uint32_t> published_{0};

  // Owned by inserters, under mutex_.
  std::mutex mutex_;
  std::uint32_t count_ = 0;
  std::vector<std::unique_ptr<Index>> indexes_;  // the live one is indexes_.back()
  std::vector<std::unique_ptr<char[]>> arena_;  // owns every key block
  char* block_ = nullptr;                        // the block small keys are appended to
  std::size_t block_used_ = 0;
};

}  // namespace syncopate::trace::detail

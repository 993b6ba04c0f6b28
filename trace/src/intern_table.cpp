#include "intern_table.hpp"

#include <bit>
#include <cstring>
#include <new>

namespace syncopate::trace::detail {

namespace {

__extension__ typedef unsigned __int128 U128;

// Multiply-fold mixing (the core step of wyhash): cheap, and good enough that probe
// sequences stay short for kernel names, NVTX names and packed handles alike.
inline std::uint64_t mix(std::uint64_t a, std::uint64_t b) noexcept {
  const U128 product = static_cast<U128>(a) * b;
  return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
}

inline std::uint64_t load64(const unsigned char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

std::uint64_t hashBytes(const void* data, std::size_t size) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ (size * 0xA0761D6478BD642FULL);
  std::size_t n = size;
  for (; n >= 8; n -= 8, p += 8) h = mix(h ^ load64(p), 0xE7037ED1A0B428DBULL);
  std::uint64_t tail = 0;
  if (n > 0) std::memcpy(&tail, p, n);
  return mix(h ^ tail, 0x8EBC6AF09C88C6E3ULL);
}

InternTable::InternTable(std::size_t value_size) noexcept
    : value_size_(value_size), stride_(sizeof(Entry) + ((value_size + 7) / 8) * 8) {
  static_assert(sizeof(Entry) % 8 == 0);
}

InternTable::~InternTable() {
  for (auto& chunk : chunks_) delete[] chunk.load(std::memory_order_relaxed);
}

InternTable::Entry* InternTable::entryAt(std::uint32_t id) const noexcept {
  const std::size_t index = id - 1;
  const unsigned chunk = static_cast<unsigned>(std::bit_width(index / kFirstChunk + 1)) - 1;
  const std::size_t offset = index - kFirstChunk * ((std::size_t{1} << chunk) - 1);
  std::byte* base = chunks_[chunk].load(std::memory_order_acquire);
  return reinterpret_cast<Entry*>(base + offset * stride_);
}

std::byte* InternTable::valueOf(std::uint32_t id) const noexcept {
  return reinterpret_cast<std::byte*>(entryAt(id)) + sizeof(Entry);
}

std::string_view InternTable::key(std::uint32_t id) const noexcept {
  if (id == 0 || id > size()) return {};
  const Entry* e = entryAt(id);
  return {e->key, e->key_size};
}

const std::byte* InternTable::value(std::uint32_t id) const noexcept { return valueOf(id); }
std::byte* InternTable::mutableValue(std::uint32_t id) noexcept { return valueOf(id); }

std::uint32_t InternTable::findIn(const Index* index, std::string_view key, std::uint64_t hash) const noexcept {
  if (index == nullptr) return 0;
  const std::uint32_t mask = index->mask;
  std::uint32_t slot = static_cast<std::uint32_t>(hash) & mask;
  for (std::uint32_t probes = 0; probes <= mask; ++probes, slot = (slot + 1) & mask) {
    const std::uint32_t id = index->slots[slot].load(std::memory_order_acquire);
    if (id == 0) return 0;
    const Entry* e = entryAt(id);
    if (e->hash == hash && e->key_size == key.size() && std::memcmp(e->key, key.data(), key.size()) == 0) {
      return id;
    }
  }
  return 0;
}

std::uint32_t InternTable::find(std::string_view key) const noexcept {
  return findIn(index_.load(std::memory_order_acquire), key, hashBytes(key.data(), key.size()));
}

void InternTable::place(Index& index, std::uint32_t id, std::uint64_t hash) noexcept {
  std::uint32_t slot = static_cast<std::uint32_t>(hash) & index.mask;
  while (index.slots[slot].load(std::memory_order_relaxed) != 0) slot = (slot + 1) & index.mask;
  index.slots[slot].store(id, std::memory_order_release);
}

bool InternTable::growIndex() noexcept {
  const Index* old = indexes_.empty() ? nullptr : indexes_.back().get();
  const std::size_t capacity = old == nullptr ? 1024 : (std::size_t{old->mask} + 1) * 2;
  if (capacity > (std::size_t{1} << 32)) return false;
  std::unique_ptr<Index> next(new (std::nothrow) Index);
  if (!next) return false;
  next->mask = static_cast<std::uint32_t>(capacity - 1);
  next->slots.reset(new (std::nothrow) std::atomic<std::uint32_t>[capacity]);
  if (!next->slots) return false;
  for (std::size_t i = 0; i < capacity; ++i) next->slots[i].store(0, std::memory_order_relaxed);
  for (std::uint32_t id = 1; id <= count_; ++id) place(*next, id, entryAt(id)->hash);
  try {
    indexes_.push_back(std::move(next));
  } catch (...) {
    return false;
  }
  index_.store(indexes_.back().get(), std::memory_order_release);
  return true;
}

const char* InternTable::storeKey(std::string_view key) noexcept {
  try {
    if (key.size() > kArenaBlock / 4) {  // a big key gets a block of its own
      arena_.emplace_back(new char[key.size()]);
      std::memcpy(arena_.back().get(), key.data(), key.size());
      return arena_.back().get();
    }
    if (block_ == nullptr || kArenaBlock - block_used_ < key.size()) {
      arena_.emplace_back(new char[kArenaBlock]);
      block_ = arena_.back().get();
      block_used_ = 0;
    }
  } catch (...) {
    return nullptr;
  }
  char* at = block_ + block_used_;
  if (!key.empty()) std::memcpy(at, key.data(), key.size());
  block_used_ += key.size();
  return at;
}

std::uint32_t InternTable::insert(std::string_view key, const void* value, bool& inserted) noexcept {
  inserted = false;
  const std::uint64_t hash = hashBytes(key.data(), key.size());
  if (const std::uint32_t id = findIn(index_.load(std::memory_order_acquire), key, hash)) return id;

  std::lock_guard lock(mutex_);
  const Index* current = indexes_.empty() ? nullptr : indexes_.back().get();
  if (const std::uint32_t id = findIn(current, key, hash)) return id;
  if (key.size() > UINT32_MAX || count_ == UINT32_MAX - 1) return 0;

  const std::uint32_t id = count_ + 1;
  const std::size_t index = id - 1;
  const unsigned chunk = static_cast<unsigned>(std::bit_width(index / kFirstChunk + 1)) - 1;
  if (chunk >= kMaxChunks) return 0;
  if (chunks_[chunk].load(std::memory_order_relaxed) == nullptr) {
    auto* block = new (std::nothrow) std::byte[(kFirstChunk << chunk) * stride_];
    if (block == nullptr) return 0;
    chunks_[chunk].store(block, std::memory_order_release);
  }
  const char* stored_key = storeKey(key);
  if (stored_key == nullptr) return 0;

  Entry* e = entryAt(id);
  e->key = stored_key;
  e->key_size = static_cast<std::uint32_t>(key.size());
  e->pad = 0;
  e->hash = hash;
  if (value_size_ > 0) std::memcpy(reinterpret_cast<std::byte*>(e) + sizeof(Entry), value, value_size_);

  // Keep the load factor at or below 1/2 so that probes stay short and always meet a hole.
  if (current == nullptr || (std::size_t{id} * 2 > std::size_t{current->mask} + 1)) {
    count_ = id - 1;  // growIndex() re-places ids 1..count_
    if (!growIndex()) return 0;
  }
  count_ = id;
  // Published before it is placed: a reader that finds the id in the index (acquire on its
  // slot) then also sees size() >= id, so key(id) and value(id) accept it.
  published_.store(id, std::memory_order_release);
  place(*indexes_.back(), id, hash);
  inserted = true;
  return id;
}

}  // namespace syncopate::trace::detail

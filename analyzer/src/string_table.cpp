#include "syncopate/analyzer/string_table.hpp"

#include <algorithm>
#include <cstring>

namespace syncopate::analyzer {

namespace {
constexpr std::size_t kChunkBytes = 64 * 1024;
}

StringTable::StringTable() { intern(""); }

StringId StringTable::intern(std::string_view s) {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  const std::size_t need = s.size();
  if (chunks_.empty() || chunk_used_ + need > chunk_size_) {
    chunk_size_ = std::max(kChunkBytes, need);
    chunks_.push_back(std::make_unique<char[]>(chunk_size_));
    chunk_used_ = 0;
  }
  char* dst = chunks_.back().get() + chunk_used_;
  if (need > 0) std::memcpy(dst, s.data(), need);
  chunk_used_ += need;
  const std::string_view stored(dst, need);
  const auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  ids_.emplace(stored, id);
  return id;
}

std::optional<StringId> StringTable::find(std::string_view s) const {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  return std::nullopt;
}

std::size_t StringTable::bytes() const {
  std::size_t total = chunks_.size() * kChunkBytes + views_.capacity() * sizeof(std::string_view);
  total += ids_.size() * (sizeof(std::string_view) + sizeof(StringId) + 2 * sizeof(void*));
  return total;
}

}  // namespace syncopate::analyzer

// Interned strings: every name in the model (kernels, API calls, NVTX ranges, streams) is stored
// once and referred to by a 32-bit id, so a column of names costs 4 bytes per row.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace syncopate::analyzer {

using StringId = std::uint32_t;

class StringTable {
 public:
  StringTable();
  StringTable(StringTable&&) noexcept = default;
  StringTable& operator=(StringTable&&) noexcept = default;
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  // The id of `s`, adding it if new. Id 0 is always the empty string.
  StringId intern(std::string_view s);
  std::optional<StringId> find(std::string_view s) const;
  std::string_view operator[](StringId id) const { return views_[id]; }
  std::size_t size() const { return views_.size(); }
  std::size_t bytes() const;  // memory held, for the benchmark's accounting

 private:
  // Characters live in fixed chunks that never move, so the views (and the map's keys) stay valid.
  std::vector<std::unique_ptr<char[]>> chunks_;
  std::size_t chunk_used_ = 0;
  std::size_t chunk_size_ = 0;
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, StringId> ids_;
};

}  // namespace syncopate::analyzer

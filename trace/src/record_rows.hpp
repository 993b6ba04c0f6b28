// Turning hot-path records into table rows: resolving catalog ids (shapes into name, grid
// and block; streams into devices; communicators into comm_id, rank and size), naming ops
// that have no name of their own, and extending 32-bit collective sequence numbers to 64.
// The writer then writes records and importers' rows through one code path.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "syncopate/trace/catalog.hpp"
#include "syncopate/trace/records.hpp"
#include "syncopate/trace/rows.hpp"

namespace syncopate::trace::detail {

// Extends `low`, the low 32 bits of a sequence number, to the 64-bit value nearest to the
// highest one seen so far (`last`, when `seen`), so that numbers arriving a little out of
// order around a wrap land on the right side of it.
std::uint64_t extendSequence(std::uint64_t last, bool seen, std::uint32_t low) noexcept;

class RecordRows {
 public:
  explicit RecordRows(Catalog& catalog) noexcept : catalog_(catalog) {}

  ApiCallRow apiCall(ThreadId thread, const ApiCallRecord& r) noexcept;
  OpRow op(const OpRecord& r) noexcept;
  // nullopt when the record names a communicator the catalog does not have.
  std::optional<CollectiveRow> collective(const CollectiveRecord& r) noexcept;
  NvtxRangeRow nvtx(ThreadId thread, const NvtxRecord& r) noexcept;
  AllocationRow allocation(const AllocRecord& r) noexcept;

  // Anomalies met so far (the writer turns them into counters and diagnostics).
  std::uint64_t bytesClamped() const noexcept { return bytes_clamped_; }
  std::uint64_t unknownReferences() const noexcept { return unknown_references_; }

 private:
  StringId fixedName(std::size_t which, const char* text) noexcept;

  Catalog& catalog_;
  std::array<StringId, 16> fixed_names_{};
  std::vector<std::uint64_t> last_seq_;  // by CommId; 0 = not seen, else seq + 1
  std::uint64_t bytes_clamped_ = 0;
  std::uint64_t unknown_references_ = 0;
};

}  // namespace syncopate::trace::detail

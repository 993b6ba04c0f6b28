// Turning hot-path records and catalog entries into table rows: resolving catalog ids (shapes
// into name, grid and block; streams into devices; communicators into comm_id, rank and size),
// naming ops that have no name of their own, and extending 32-bit collective sequence numbers
// to 64. The writer then writes records, catalog entries and importers' rows through one code
// path.
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

// The rows of the NCCL profiler's records. A channel's start and stop each know one timer.
NcclOpRow ncclOpRow(const NcclOpRecord& r) noexcept;
NcclKernelChannelRow ncclKernelChannelRow(const NcclKernelChannelRecord& r) noexcept;

// The row of a catalog entry (`index` for devices, which are listed in registration order).
// They copy the entry's names; the writer calls them only for what the catalog gained.
StringRow stringRow(const Catalog& catalog, std::uint32_t id);
StreamRow streamRow(const Catalog& catalog, std::uint32_t id);
ThreadRow threadRow(const Catalog& catalog, std::uint32_t id);
DeviceRow deviceRow(const Catalog& catalog, std::uint32_t index);
CommunicatorRow communicatorRow(const Catalog& catalog, std::uint32_t id);

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

// The catalog: everything records refer to by id — strings, kernel launch shapes, streams,
// events, communicators, threads, devices. Shared by the collector's threads (which register
// and look up) and the writer's thread (which persists whatever appeared since its last
// flush, before the rows that refer to it).
//
// Thread safety: every member function may be called from any thread at any time.
//  - Looking up something already known (intern/find of a known key, the accessors) is
//    lock-free and wait-free: a bounded probe of an open-addressing index that is published
//    with release/acquire and never modified in place once readers can see it.
//  - Registering something new takes a mutex and may allocate (the first sighting of an NVTX
//    name, a kernel registration, a stream creation — not per launch).
//  - Nothing throws. A registration that cannot allocate returns 0 ("none") and is counted
//    in failedRegistrations(), which the writer stores as the counter catalog_failures.
// Ids are dense, start at 1 and are never reused; an entry never changes once published.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "syncopate/trace/ids.hpp"

namespace syncopate::trace {

// What a kernel launch looks like, minus its timing: interned so that an OpRecord carries it
// in 4 bytes. Collective/P2P ops use it too (their kernel's name and dims, or the NCCL call's
// name with unknown dims).
struct LaunchShape {
  StringId name_id = kNoString;
  Dim3 grid;
  Dim3 block;
  friend constexpr bool operator==(const LaunchShape&, const LaunchShape&) = default;
};

// A stream, keyed by (device, handle): the legacy default stream (handle 0) of each device is
// a stream of its own.
struct CatalogStream {
  std::int32_t device = 0;
  std::uint64_t handle = 0;  // the cudaStream_t value
  std::optional<std::uint32_t> flags;
  std::optional<std::int32_t> priority;
  StringId name_id = kNoString;  // e.g. "default", "nccl", an importer's label
};

// A communicator as seen by this process, keyed by (comm_id, comm_rank).
struct CatalogCommunicator {
  std::uint64_t comm_id = 0;  // identical on every rank (e.g. a hash of the ncclUniqueId)
  std::int32_t comm_rank = 0;
  std::int32_t comm_size = 0;
  std::optional<std::int32_t> device;
  std::uint64_t handle = 0;  // the ncclComm_t value
  std::optional<std::int64_t> init_ns;
  std::optional<std::uint64_t> parent_comm_id;  // for ncclCommSplit
};

struct CatalogDevice {
  std::int32_t ordinal = 0;
  StringId name_id = kNoString;
  StringId uuid_id = kNoString;        // "GPU-xxxxxxxx-..." text
  StringId pci_bus_id_id = kNoString;  // "0000:3b:00.0"
  std::optional<std::int32_t> sm_count;
  std::optional<std::int64_t> memory_bytes;
};

struct CatalogThread {
  std::int64_t tid = 0;  // the kernel's thread id (gettid)
  StringId name_id = kNoString;
};

class Catalog {
 public:
  Catalog() noexcept;
  ~Catalog();
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  // False when the catalog could not allocate its first tables; every call then returns 0.
  bool valid() const noexcept;

  // Strings. intern() of a known string is wait-free; find() never registers.
  StringId intern(std::string_view text) noexcept;
  StringId findString(std::string_view text) const noexcept;
  // The text of a published id; empty for kNoString or an id not (yet) published. The view
  // stays valid for the catalog's lifetime.
  std::string_view string(StringId id) const noexcept;
  std::uint32_t stringCount() const noexcept;  // ids 1..stringCount() are published

  ShapeId internShape(const LaunchShape& shape) noexcept;
  LaunchShape shape(ShapeId id) const noexcept;  // a default LaunchShape for unknown ids
  std::uint32_t shapeCount() const noexcept;

  // Streams: register returns the existing id when (device, handle) is known; the first
  // registration's attributes win.
  StreamId registerStream(const CatalogStream& info) noexcept;
  StreamId findStream(std::int32_t device, std::uint64_t handle) const noexcept;
  std::optional<CatalogStream> stream(StreamId id) const noexcept;
  std::uint32_t streamCount() const noexcept;

  // Events: a dense id per cudaEvent_t value (a reused handle keeps its id, which is what
  // matching a wait with the latest record of that event needs).
  EventId eventId(std::uint64_t handle) noexcept;
  EventId findEvent(std::uint64_t handle) const noexcept;

  // Communicators: registered when an init returns; findCommunicator(handle) gives the most
  // recently registered communicator with that ncclComm_t value (handles are reused after
  // ncclCommDestroy, ids are not).
  CommId registerCommunicator(const CatalogCommunicator& info) noexcept;
  CommId findCommunicator(std::uint64_t handle) const noexcept;
  std::optional<CatalogCommunicator> communicator(CommId id) const noexcept;
  std::uint32_t communicatorCount() const noexcept;

  // Threads, keyed by tid; the first registration's name wins.
  ThreadId registerThread(const CatalogThread& info) noexcept;
  ThreadId findThread(std::int64_t tid) const noexcept;
  std::optional<CatalogThread> thread(ThreadId id) const noexcept;
  std::uint32_t threadCount() const noexcept;

  // Devices, keyed by ordinal; index i in 1..deviceCount() in registration order.
  std::uint32_t registerDevice(const CatalogDevice& info) noexcept;
  std::optional<CatalogDevice> deviceAt(std::uint32_t index) const noexcept;
  std::uint32_t deviceCount() const noexcept;

  std::uint64_t failedRegistrations() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace syncopate::trace

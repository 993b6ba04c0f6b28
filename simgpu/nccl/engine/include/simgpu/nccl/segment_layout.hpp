// The layout of a communicator's shared memory segment, mapped by every rank (in any process)
// of the communicator. A fresh segment reads as zeros, which is its initial state; the
// creator then writes the geometry and publishes `magic` last.
//
//   SegmentHeader                      geometry, attach count, the communicator-wide abort
//   RankRecord[n]                      identity, doorbell, bootstrap, arrival and collective counters
//   CollStepHeader[n][2]               what each rank called, per staging buffer
//   PairQueue[n][n]                    head/tail of the queue from rank s to rank d
//   P2pSlotHeader[n][n][kP2pSlots]     one header per point-to-point slot
//   collective staging  [n][2][chunk_bytes]
//   point-to-point slots[n][n][kP2pSlots][p2p_slot_bytes]
//
// Collectives run in steps: in step k every rank writes its part into its staging buffer k%2,
// bumps coll_posted, and once every rank has posted step k, reads what it needs from all of
// them and bumps coll_consumed. A buffer is rewritten (step k+2) only after every rank has
// consumed step k. A large all-reduce step has a phase in between: each rank reduces its own
// slice of the chunk (from every rank's buffer, into its own), bumps coll_reduced, and once
// all have, every rank gathers the reduced slices. Point-to-point messages go through a single-producer single-consumer
// queue per ordered pair of ranks. Waiters sleep on their own doorbell (a process-shared
// futex) which the rank that changed something rings.
//
// The structs hold std::atomic members, which are lock-free and address-free for these
// widths (static_asserts in futex.hpp), so they work between processes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace simgpu::nccl {

inline constexpr std::uint64_t kSegmentMagic = 0x316c63636e6d6973ULL;  // "simnccl1"
inline constexpr std::uint32_t kLayoutVersion = 4;
inline constexpr int kCollBuffers = 2;
inline constexpr int kP2pSlots = 2;
inline constexpr std::size_t kBootstrapBytes = 256;
inline constexpr std::size_t kAbortMessageBytes = 1024;

struct Geometry {
  std::uint32_t nranks = 0;
  std::uint64_t chunk_bytes = 0;     // collective staging, per rank and buffer
  std::uint64_t p2p_slot_bytes = 0;  // per slot of each pair's queue
  bool operator==(const Geometry&) const = default;
};

// The geometry of a communicator of `nranks`: 512 KiB staging per rank and buffer and a
// point-to-point budget of 16 MiB (slots of 16..256 KiB), or every chunk of `chunk_override`
// bytes when non-zero (SIMGPU_NCCL_CHUNK_BYTES; tests use it to force many steps).
Geometry makeGeometry(int nranks, std::size_t chunk_override);

struct alignas(64) SegmentHeader {
  std::atomic<std::uint64_t> magic;
  std::uint32_t layout_version;
  Geometry geometry;
  std::uint64_t total_bytes;
  std::int32_t creator_pid;
  std::atomic<std::uint32_t> attached;  // ranks that claimed their record
  // The communicator-wide failure: 0 while healthy, else an ncclResult_t. The first rank
  // to fail sets it (compare-and-swap), writes the message, then sets abort_message_ready.
  std::atomic<std::uint32_t> abort_code;
  std::atomic<std::uint32_t> abort_message_ready;
  char abort_message[kAbortMessageBytes];
};

struct alignas(64) RankRecord {
  std::atomic<std::int32_t> pid;     // 0 until the rank claims the record
  std::atomic<std::uint32_t> ready;  // the identity below is written
  std::atomic<std::uint32_t> departed;  // the rank destroyed its communicator
  std::int32_t device;
  std::int32_t host;
  alignas(64) std::atomic<std::uint32_t> doorbell;
  std::atomic<std::uint32_t> sleepers;
  alignas(64) std::atomic<std::uint64_t> boot_posted;
  std::atomic<std::uint64_t> boot_consumed;
  char boot_data[kBootstrapBytes];
  // The arrival exchange of collectives timed ahead of their data (Endpoint::latestArrival),
  // in rounds as the bootstrap's.
  alignas(64) std::atomic<std::uint64_t> arrival_posted;
  std::atomic<std::uint64_t> arrival_consumed;
  std::int64_t arrival_ns;
  // No collective of this rank on the communicator that it has not posted yet arrives before
  // this model time: written (only ever raised) by the rank's process while a peer waiting for
  // its arrival asked for it less than kFloorAskedForNs ago (floor_asked_ns, CLOCK_MONOTONIC),
  // so that the peer's device need not wait for the arrival to learn that (simgpu::
  // raiseStartBound; docs/simgpu.md, "Peers that wait for each other").
  alignas(64) std::atomic<std::int64_t> arrival_floor_ns;
  std::atomic<std::int64_t> floor_asked_ns;
  alignas(64) std::atomic<std::uint64_t> coll_posted;
  alignas(64) std::atomic<std::uint64_t> coll_reduced;
  alignas(64) std::atomic<std::uint64_t> coll_consumed;
};

// How long a peer's request for a rank's arrival floor stays open: longer than a waiting
// peer's longest sleep between two requests (task_runner.cpp), so that the floor follows the
// rank for as long as the peer waits.
inline constexpr std::int64_t kFloorAskedForNs = 250'000'000;

// What a rank called, compared across ranks at every collective step.
struct CollDesc {
  std::uint64_t count = 0;
  std::int32_t root = -1;
  std::uint8_t kind = 0;
  std::uint8_t datatype = 0;
  std::uint8_t op = 0;
  std::uint8_t premul = 0;
  bool operator==(const CollDesc&) const = default;
};

struct alignas(64) CollStepHeader {
  CollDesc desc;
  std::uint64_t seq;         // the collective's number on this communicator
  std::uint64_t step_in_op;  // 0 for the first step of a collective
  std::int64_t arrival_ns;   // when this rank's collective began (model time)
};

struct alignas(64) PairQueue {
  alignas(64) std::atomic<std::uint64_t> head;  // chunks posted by the sender
  alignas(64) std::atomic<std::uint64_t> tail;  // chunks consumed by the receiver
  // Written by the receiver before it consumes the first chunk of a message; read by the
  // sender after it sees that chunk consumed.
  std::int64_t recv_arrival_ns;
};

struct alignas(64) P2pSlotHeader {
  std::uint64_t message;  // the message's number on this pair
  std::uint64_t count;
  std::uint32_t datatype;
  std::uint32_t chunk;
  std::uint32_t nchunks;
  std::uint64_t offset;  // bytes into the message
  std::uint64_t nbytes;
  std::int64_t send_arrival_ns;
};

class SegmentLayout {
 public:
  explicit SegmentLayout(const Geometry& geometry);

  const Geometry& geometry() const { return geometry_; }
  std::size_t totalBytes() const { return total_; }

  SegmentHeader* header(void* base) const { return static_cast<SegmentHeader*>(base); }
  RankRecord* rank(void* base, int r) const { return at<RankRecord>(base, ranks_) + r; }
  CollStepHeader* collHeader(void* base, int r, int buffer) const {
    return at<CollStepHeader>(base, coll_headers_) + r * kCollBuffers + buffer;
  }
  char* collData(void* base, int r, int buffer) const {
    return at<char>(base, coll_data_) + (static_cast<std::size_t>(r) * kCollBuffers + buffer) * geometry_.chunk_bytes;
  }
  PairQueue* pair(void* base, int src, int dst) const { return at<PairQueue>(base, pairs_) + pairIndex(src, dst); }
  P2pSlotHeader* p2pHeader(void* base, int src, int dst, int slot) const {
    return at<P2pSlotHeader>(base, p2p_headers_) + pairIndex(src, dst) * kP2pSlots + slot;
  }
  char* p2pData(void* base, int src, int dst, int slot) const {
    return at<char>(base, p2p_data_) + (pairIndex(src, dst) * kP2pSlots + slot) * geometry_.p2p_slot_bytes;
  }

 private:
  template <typename T>
  static T* at(void* base, std::size_t offset) {
    return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
  }
  std::size_t pairIndex(int src, int dst) const {
    return static_cast<std::size_t>(src) * geometry_.nranks + static_cast<std::size_t>(dst);
  }

  Geometry geometry_;
  std::size_t ranks_ = 0, coll_headers_ = 0, pairs_ = 0, p2p_headers_ = 0, coll_data_ = 0,
              p2p_data_ = 0, total_ = 0;
};

}  // namespace simgpu::nccl

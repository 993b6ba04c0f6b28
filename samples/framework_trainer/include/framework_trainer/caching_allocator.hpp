// A caching device allocator in the manner of PyTorch's: a few large segments are taken from
// the device (cudaMalloc) and kept; every tensor is a sub-range (a block) of one of them.
// A freed block goes back to its stream's free list and is reused by the next allocation on
// that stream without waiting: work on one stream runs in order, so a later user of the block
// cannot run before an earlier one. Blocks are never handed to another stream (PyTorch's rule
// too, absent record_stream), which is what makes reuse without synchronisation safe.
//
// The segments' source is a parameter, so that the bookkeeping is tested without a GPU.
// Thread-safe (the forward thread allocates, the backward thread frees).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace framework_trainer {

class CachingAllocator {
 public:
  using StreamKey = std::uintptr_t;  // a cudaStream_t, as an integer
  // Returns a segment of exactly `bytes`, or nullptr when the device has no room.
  using SegmentSource = std::function<void*(std::size_t bytes)>;
  using SegmentRelease = std::function<void(void* segment)>;

  static constexpr std::size_t kAlignment = 512;  // every block starts on this boundary
  static constexpr std::size_t kSegmentRounding = std::size_t{2} << 20;

  // Segments are at least `segment_bytes` (rounded up to 2 MiB); a larger request gets a
  // segment of its own size, rounded up to 2 MiB.
  CachingAllocator(SegmentSource source, SegmentRelease release, std::size_t segment_bytes);
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  ~CachingAllocator();  // returns every segment

  // A block of at least `bytes` (rounded up to kAlignment) for use on `stream`. Throws
  // std::runtime_error when a new segment is needed and the source has none.
  void* allocate(std::size_t bytes, StreamKey stream);
  // Gives a block back to its stream's free list; adjacent free blocks of one segment merge.
  // Throws std::logic_error for a pointer this allocator did not hand out.
  void release(void* block);
  // Says whether the work another stream was given that uses a block has finished.
  using UseFinished = std::function<bool()>;
  // Gives a block used on another stream back once `finished()` says so, as PyTorch's
  // record_stream does: until then it is not reused, else its stream's next user could overwrite
  // it while the other stream still reads it. Asked at every allocation, in the order given.
  void releaseWhen(void* block, UseFinished finished);

  struct Stats {
    std::size_t segments = 0;
    std::size_t segment_bytes = 0;    // held from the device
    std::size_t allocated_bytes = 0;  // in blocks handed out
    std::size_t peak_allocated_bytes = 0;
  };
  Stats stats() const;

 private:
  struct Block {
    std::uintptr_t segment = 0;
    std::size_t size = 0;
    StreamKey stream = 0;
    bool free = false;
  };

  std::map<std::uintptr_t, Block>::iterator newSegment(std::size_t bytes, StreamKey stream);
  void releaseLocked(void* block);
  void releaseFinishedUses();
  void mergeWithNext(std::map<std::uintptr_t, Block>::iterator block);

  SegmentSource source_;
  SegmentRelease release_;
  std::size_t segment_bytes_;
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, Block> blocks_;  // by address, free and in use
  std::vector<std::pair<void*, std::size_t>> segments_;
  std::vector<std::pair<void*, UseFinished>> awaiting_;  // blocks released once their use finishes
  Stats stats_;
};

}  // namespace framework_trainer

#include "framework_trainer/caching_allocator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace framework_trainer {
namespace {

std::size_t roundUp(std::size_t value, std::size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

CachingAllocator::CachingAllocator(SegmentSource source, SegmentRelease release, std::size_t segment_bytes)
    : source_(std::move(source)), release_(std::move(release)), segment_bytes_(roundUp(segment_bytes, kSegmentRounding)) {}

CachingAllocator::~CachingAllocator() {
  for (const auto& [segment, bytes] : segments_) release_(segment);
}

std::map<std::uintptr_t, CachingAllocator::Block>::iterator CachingAllocator::newSegment(std::size_t bytes,
                                                                                         StreamKey stream) {
  const std::size_t size = std::max(segment_bytes_, roundUp(bytes, kSegmentRounding));
  void* segment = source_(size);
  if (segment == nullptr) {
    throw std::runtime_error(fmt::format(
        "the caching allocator could not get a new segment of {} MiB from the device (it holds {} segment(s), "
        "{} MiB, {} MiB of them in use)",
        size >> 20, stats_.segments, stats_.segment_bytes >> 20, stats_.allocated_bytes >> 20));
  }
  segments_.emplace_back(segment, size);
  ++stats_.segments;
  stats_.segment_bytes += size;
  const auto address = reinterpret_cast<std::uintptr_t>(segment);
  return blocks_.emplace(address, Block{address, size, stream, true}).first;
}

void* CachingAllocator::allocate(std::size_t bytes, StreamKey stream) {
  const std::size_t size = roundUp(std::max<std::size_t>(bytes, 1), kAlignment);
  std::lock_guard lock(mutex_);
  releaseFinishedUses();
  // Best fit among this stream's free blocks; the lowest address among equals.
  auto best = blocks_.end();
  for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
    const Block& b = it->second;
    if (b.free && b.stream == stream && b.size >= size && (best == blocks_.end() || b.size < best->second.size)) best = it;
  }
  if (best == blocks_.end()) best = newSegment(size, stream);
  Block& chosen = best->second;
  if (chosen.size - size >= kAlignment) {  // the rest stays free for this stream
    blocks_.emplace(best->first + size, Block{chosen.segment, chosen.size - size, stream, true});
    chosen.size = size;
  }
  chosen.free = false;
  stats_.allocated_bytes += chosen.size;
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  return reinterpret_cast<void*>(best->first);
}

void CachingAllocator::mergeWithNext(std::map<std::uintptr_t, Block>::iterator block) {
  const auto next = std::next(block);
  if (next == blocks_.end()) return;
  const Block& n = next->second;
  const Block& b = block->second;
  if (n.free && n.segment == b.segment && n.stream == b.stream && block->first + b.size == next->first) {
    block->second.size += n.size;
    blocks_.erase(next);
  }
}

void CachingAllocator::release(void* pointer) {
  std::lock_guard lock(mutex_);
  releaseLocked(pointer);
}

void CachingAllocator::releaseWhen(void* pointer, UseFinished finished) {
  std::lock_guard lock(mutex_);
  const auto it = blocks_.find(reinterpret_cast<std::uintptr_t>(pointer));
  const bool awaiting = std::any_of(awaiting_.begin(), awaiting_.end(), [&](const auto& a) { return a.first == pointer; });
  if (it == blocks_.end() || it->second.free || awaiting) {
    throw std::logic_error(fmt::format("released {} which is not a block in use of this allocator", pointer));
  }
  awaiting_.emplace_back(pointer, std::move(finished));
}

void CachingAllocator::releaseFinishedUses() {
  std::size_t kept = 0;
  for (auto& entry : awaiting_) {
    if (entry.second()) releaseLocked(entry.first);
    else awaiting_[kept++] = std::move(entry);
  }
  awaiting_.resize(kept);
}

void CachingAllocator::releaseLocked(void* pointer) {
  const auto it = blocks_.find(reinterpret_cast<std::uintptr_t>(pointer));
  if (it == blocks_.end() || it->second.free) {
    throw std::logic_error(fmt::format("released {} which is not a block in use of this allocator", pointer));
  }
  it->second.free = true;
  stats_.allocated_bytes -= it->second.size;
  mergeWithNext(it);
  if (it != blocks_.begin()) {
    const auto previous = std::prev(it);
    if (previous->second.free) mergeWithNext(previous);
  }
}

CachingAllocator::Stats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace framework_trainer

// A FIFO over a power-of-two ring that grows but never shrinks, so that a stream's queue
// allocates only while it reaches a new high-water mark, never per op. Elements stay in place
// until popped (the worker works on front() while others push).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace simgpu::detail {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return slots_[head_]; }
  T& at(std::size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }

  // Growing moves elements: callers must not keep pointers into elements across push().
  T& push() {
    if (size_ == slots_.size()) grow();
    T& slot = slots_[(head_ + size_) & (slots_.size() - 1)];
    ++size_;
    return slot;
  }

  void pop() {
    slots_[head_] = T{};
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }

 private:
  void grow() {
    std::vector<T> bigger(slots_.empty() ? 16 : slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move(at(i));
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace simgpu::detail

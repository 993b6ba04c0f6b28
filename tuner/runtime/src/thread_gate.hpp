// Which thread the scheduler belongs to: the first to make a call in plan mode (the training
// loop's). The first call from any other thread stops the plan (issuing what it holds in the
// original order and waiting for what it moved) before it passes through, since the program
// may have ordered it after the owner's calls (a join, a lock, a queue); it waits for a call
// of the owner in progress to return first. From then on every call passes straight through.
//
// The owner is kept out of the scheduler meanwhile by a flag each side raises before it looks
// at the other's (Dekker: with sequentially consistent accesses at least one of them sees the
// other's). Uncontended, entering costs the owner one store and one load.
#pragma once

#include <atomic>
#include <cstdint>

#include "syncopate/trace/function_ref.hpp"

namespace syncopate::preload {

class ThreadGate {
 public:
  // Whether the calling thread owns the scheduler (the first thread to ask does).
  bool callerOwns() noexcept;
  // A call of another thread: the first one runs `stop_plan` once the owner is out of the
  // scheduler; every one returns once the plan is stopped.
  void foreignCall(trace::FunctionRef<void()> stop_plan) noexcept;
  // The owner around a call into the scheduler: false (leave the scheduler alone, pass the call
  // through) once another thread has stopped the plan.
  bool enter() noexcept;
  void leave() noexcept { owner_busy_.store(false, std::memory_order_release); }

 private:
  void waitStopped() noexcept;

  std::atomic<std::uint64_t> owner_{0};
  std::atomic<bool> foreign_{false};          // a second thread made a call
  std::atomic<bool> foreign_stopped_{false};  // ... and the plan is stopped for it
  std::atomic<bool> owner_busy_{false};       // the owner is inside the scheduler
};

}  // namespace syncopate::preload

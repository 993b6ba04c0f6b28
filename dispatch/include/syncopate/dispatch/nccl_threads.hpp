// Which calls are NCCL's own work: those NCCL makes inside a call of the real NCCL on the
// caller's thread, and every call of the threads NCCL starts (its proxy, progress and service threads,
// which allocate, copy and synchronise on NCCL's own streams and buffers). The preload library
// tells them from the application's by where a thread was started: a thread created while its
// creator was inside an NCCL call, or by one of NCCL's threads, is NCCL's (pthread_create is
// interposed for that, at the cost of one thread-local read per thread created).
//
// The reordering runtime hands NCCL's work to the layer below untouched: it orders no
// application data, and NCCL may wait for it inside a call the runtime made (a proxy thread
// allocating a peer's buffers while a collective connects), so it must never wait for the
// runtime.
#pragma once

namespace syncopate::preload {

// True on a thread NCCL started.
bool onNcclThread() noexcept;

// True while this thread is inside a call of the real NCCL, or is one of NCCL's threads.
bool insideNccl() noexcept;

// Raised around every call of the real NCCL (the bottom of NCCL's dispatch chain) for its length.
class NcclCallScope {
 public:
  NcclCallScope() noexcept;
  ~NcclCallScope();
  NcclCallScope(const NcclCallScope&) = delete;
  NcclCallScope& operator=(const NcclCallScope&) = delete;
};

}  // namespace syncopate::preload

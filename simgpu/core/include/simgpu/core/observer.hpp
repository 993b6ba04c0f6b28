// A hook that sees every completed op, for the CUPTI layer (activity records) and tests.
// The observer runs on the stream's worker thread after the op's modelled end and before any
// host synchronisation can see the op as complete, so a host that synchronised and then
// flushed its observer has every op. It must be quick and thread-safe.
#pragma once

#include <simgpu/core/export.hpp>
#include <simgpu/core/stream_op.hpp>

#include <cstdint>

namespace simgpu {

struct CompletedOp {
  OpKind kind = OpKind::Kernel;
  CopyDirection direction = CopyDirection::None;
  WorkClass work_class = WorkClass::Compute;
  int device = 0;
  cudaStream_t stream = nullptr;  // the handle the op was enqueued with (0 for the legacy stream)
  unsigned long long stream_id = 0;
  std::string_view name;
  TimeNs start_ns = 0;  // model start
  TimeNs end_ns = 0;    // model end, interference included
  std::uint64_t correlation_id = 0;
  std::uint64_t bytes = 0;
  bool abandoned = false;  // dropped by cudaDeviceReset or process exit before it ran
};

using OpObserver = void (*)(const CompletedOp& op, void* user_data);

// Installs (or, with nullptr, removes) the one observer. Ops completing concurrently with the
// change may be seen by the old observer.
SIMGPU_API void setOpObserver(OpObserver observer, void* user_data);

// Called on the thread that enqueues an op, once the op has its correlation id: what the CUPTI
// layer needs to tie the op to the external correlation id that thread has pushed. Runs with
// the core's lock held, so it must be quick and must not call simgpu.
using EnqueueObserver = void (*)(std::uint64_t correlation_id, void* user_data);
SIMGPU_API void setEnqueueObserver(EnqueueObserver observer, void* user_data);

}  // namespace simgpu

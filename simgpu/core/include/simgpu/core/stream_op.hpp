// The seam between simgpu's core (devices, streams, the time model) and the API layers built
// on it (libcudart.so.13, libnccl.so.2, libcupti.so.13). An API layer turns a call into a
// StreamOp and enqueues it; the stream's worker thread runs the op's body when the op reaches
// the head of its stream (after everything it must wait for), then sleeps out the rest of the
// modelled duration, stretched by compute/communication interference on that device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string_view>

namespace simgpu {

using TimeNs = std::int64_t;  // nanoseconds on CLOCK_MONOTONIC, the clock of every simgpu time

TimeNs nowNs();

// Which device resource an op occupies: interference is modelled between Compute and
// Communication ops that overlap on one device; Copy uses the copy engines; Marker is free.
enum class WorkClass : std::uint8_t { Compute, Communication, Copy, Marker };

struct OpContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  TimeNs start_ns = 0;  // when the op reached the head of its stream and began
};

// What an op's body reports once its real work (copying, reducing, waiting for peers) is done.
struct OpTiming {
  // When the modelled execution begins. 0 means OpContext::start_ns. A collective sets it to
  // the arrival time of the last rank, since no rank's kernel can finish before that.
  TimeNs model_start_ns = 0;
  // Modelled duration at full speed from model_start_ns; interference stretches it.
  TimeNs duration_ns = 0;
  // A sticky asynchronous error for the device/communicator (cudaSuccess when none).
  cudaError_t error = cudaSuccess;
};

struct StreamOp {
  WorkClass work_class = WorkClass::Compute;
  std::string_view name;  // must outlive the op (a string literal or a registry entry)
  std::function<OpTiming(const OpContext&)> body;
};

// Enqueue on `stream` of the calling thread's current device, with CUDA's ordering rules
// (legacy default stream, per-thread default stream, non-blocking streams).
cudaError_t enqueue(cudaStream_t stream, StreamOp op);

}  // namespace simgpu

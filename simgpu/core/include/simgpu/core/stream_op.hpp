// The seam between simgpu's core (devices, streams, the time model) and the API layers built
// on it (libcudart.so.13, libnccl.so.2, libcupti.so.13). An API layer turns a call into a
// StreamOp and enqueues it; the stream's worker thread runs the op's body when the op reaches
// the head of its stream (after everything it must wait for), then sleeps out the rest of the
// modelled duration, stretched by compute/communication interference on that device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

// libsimgpu.so hides everything it does not export on purpose; the seam is exported.
#pragma GCC visibility push(default)

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
  // The scheduler's own handle of the op, for raiseStartBound; null where the op is timed
  // already (a body run after its timing step).
  void* op = nullptr;
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

// What an op is, for observers (the CUPTI layer, tests); the scheduler itself only looks at
// WorkClass.
enum class OpKind : std::uint8_t {
  Kernel,
  Memcpy,
  Memset,
  Collective,
  P2P,
  EventRecord,
  StreamWait,
  HostFunc,
  // Added later: pages of managed memory moved by cudaMemPrefetchAsync. Not a copy a profiler
  // reports as one (CUPTI counts migrations apart, as unified-memory activity).
  Prefetch,
};

// Direction of a Memcpy op (OpKind::Memcpy); None for every other kind.
enum class CopyDirection : std::uint8_t { None, HostToDevice, DeviceToHost, DeviceToDevice, HostToHost, Peer };

struct StreamOp {
  WorkClass work_class = WorkClass::Compute;
  std::string_view name;  // must outlive the op (a string literal or a registry entry)
  std::function<OpTiming(const OpContext&)> body;
  // Fields added after the seam was first fixed (defaults keep older callers unchanged):
  OpKind kind = OpKind::Kernel;
  CopyDirection direction = CopyDirection::None;
  std::uint64_t bytes = 0;           // bytes moved or written, reported to observers
  std::uint64_t correlation_id = 0;  // 0: the core assigns the next id (nextCorrelationId)
  // The modelled duration at full speed when it is known at enqueue (kernels, copies, memsets);
  // -1 when only the body can tell (a collective, whose start waits for its peers). An op that
  // knows it is timed before its body runs, and the ops queued behind it start no earlier than
  // its duration: decisions other streams take in model time then need not wait for its real
  // work, which may take far longer than modelled (docs/simgpu.md, "Real work slower than the
  // model"). The body's own OpTiming then only reports errors.
  TimeNs duration_ns = -1;
  // A lower bound on the modelled duration at full speed when only the start is unknown at
  // enqueue (a collective: its duration follows from its size and links, its start from its
  // peers). Bounds count it as they count duration_ns, so the ops queued behind a collective
  // start no earlier than its start bound plus this, whether or not its real work is done yet.
  TimeNs least_duration_ns = 0;
  // For an op whose start only its peers can tell (a collective): run on the stream's worker
  // once the op reaches its start, it reports the op's model start and duration (and errors)
  // without doing the op's real work, which `body` then does on the stream's body thread. The
  // op is then timed as one whose duration is known: decisions other streams take in model
  // time need not wait for its real work. Empty for every other op.
  std::function<OpTiming(const OpContext&)> timing;
  // Which group of peers the op meets (a collective's or a transfer's communicator): ops that
  // say the same here are the ones peerGroupStartBound speaks for. 0: the op meets nobody;
  // kAnyPeerGroup: several groups at once (a fused NCCL group over several communicators).
  std::uint64_t peer_group = 0;
  // How hard a Communication op presses on the compute it overlaps: compute runs
  // 1 / (1 + compute_slowdown * w) as fast, w the largest weight among the communication ops
  // running. An NCCL collective's is its channels (SMs taken) over the profile's default
  // channels; 1 for everything else, and everywhere when the profile models no channels.
  double interference_weight = 1.0;
};

inline constexpr std::uint64_t kAnyPeerGroup = ~std::uint64_t{0};

// Enqueue on `stream` of the calling thread's current device, with CUDA's ordering rules
// (legacy default stream, per-thread default stream, non-blocking streams).
cudaError_t enqueue(cudaStream_t stream, StreamOp op);

// Added after the seam was first fixed:

// A point in a stream's work: the op `seq` of the stream (opaque to the API layers). It does not
// keep the stream alive: a stream that is gone has no work left to wait for. Empty: no point.
struct StreamPoint {
  std::weak_ptr<void> stream;
  std::uint64_t seq = 0;
};

// enqueue(), with the op also waiting for each point of `after` (points of `stream` itself, or
// already completed, add nothing) as a stream waits for an event recorded there, but without an
// op of its own: NCCL's launch, which waits for its communicators' previous launches on whatever
// streams they were. `*at` (if given) receives the point of the op itself.
cudaError_t enqueueAfter(cudaStream_t stream, StreamOp op, const std::vector<StreamPoint>& after, StreamPoint* at);

// A process-wide increasing id for API calls and the ops they create (never 0).
std::uint64_t nextCorrelationId();

// True once the process is exiting or the op's device is being reset: a body that waits for
// something outside its stream (peers of a collective) must poll this and give up (returning
// an error in OpTiming) so that exit and cudaDeviceReset never hang.
bool shuttingDown(int device);

// Waiting for peers without holding the device up (docs/simgpu.md, "Peers that wait for each
// other"). While a timing step waits for its peers, the other streams of its device may have to
// wait for it to learn its start (an op whose end depends on whether a collective overlaps it);
// and the peers may themselves wait, through their own streams, for something that this
// device's host does only once those streams move on. Each rank therefore tells its peers how
// early its next op of a peer group could start (peerGroupStartBound: a lower bound that holds
// for every such op not yet started, queued or still to be enqueued), and a timing step that
// learns from them that its op starts no earlier than some time says so (raiseStartBound), so
// that decisions that only needed to know that can be taken at once: a conservative
// simulation's null messages.
//
// The op `ctx` speaks for (a timing step's own) starts no earlier than `bound`.
void raiseStartBound(const OpContext& ctx, TimeNs bound);
// No op of `device` with this peer_group (or kAnyPeerGroup) that has not started yet, nor any
// enqueued from now on, starts before the returned time.
TimeNs peerGroupStartBound(int device, std::uint64_t peer_group);

}  // namespace simgpu

#pragma GCC visibility pop

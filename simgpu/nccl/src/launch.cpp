#include "launch.hpp"

#include "arrival_floors.hpp"

#include "simgpu/core/copies.hpp"
#include "simgpu/core/runtime.hpp"
#include "simgpu/core/stream_op.hpp"
#include "simgpu/core/streams.hpp"
#include "simgpu/nccl/datatype.hpp"
#include "simgpu/nccl/task_group.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <utility>

namespace simgpu::nccl {
namespace {

// The calls of one group on one stream.
struct Fused {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::vector<PendingCall> calls;
  std::vector<std::pair<std::shared_ptr<CommState>, std::uint64_t>> tickets;  // per communicator
  // An operation of collectives only is timed ahead of its data (timeFused): its turns in each
  // communicator's timing order (parallel to `tickets`), and what the timing step found.
  bool timed_ahead = false;
  std::vector<std::uint64_t> timing_tickets;
  GroupTiming timing;
  Status timing_status;
};

std::vector<Fused> fuseByStream(std::vector<PendingCall> calls) {
  std::vector<Fused> out;
  for (PendingCall& call : calls) {
    const int device = call.comm->device();
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const Fused& f) { return f.device == device && f.stream == call.stream; });
    if (it == out.end()) {
      Fused fused;
      fused.device = device;
      fused.stream = call.stream;
      out.push_back(std::move(fused));
      it = out.end() - 1;
    }
    it->calls.push_back(std::move(call));
  }
  return out;
}

// The channels of each collective of an operation, as it is launched: the communicator's
// default, or the tuner plugin's choice (asked with the number of calls fused with it).
void assignChannels(Fused& f) {
  const int num_pipe_ops = static_cast<int>(f.calls.size());
  for (PendingCall& c : f.calls) {
    if (c.is_p2p) continue;
    const JoinPlan& plan = c.comm->plan();
    const Endpoint& ep = c.comm->endpoint();
    const std::size_t bytes = collectiveBytes(c.coll.kind, c.coll.count, datatypeSize(c.coll.datatype), ep.nranks());
    const int tuned = tunerChannels(c.comm->tuner, plan.cost, c.coll.kind, bytes, ep.places(), plan.channels.default_count,
                                    num_pipe_ops);
    c.coll.channels = chosenChannels(plan.channels, tuned);
  }
}

// How hard the operation presses on compute: its widest call's weight (1 for point-to-point).
double interferenceWeightOf(const Fused& f) {
  double weight = 0;
  bool collective = false;
  for (const PendingCall& c : f.calls) {
    if (c.is_p2p) continue;
    collective = true;
    weight = std::max(weight, interferenceWeight(c.comm->plan().channels, c.coll.channels));
  }
  return collective ? weight : 1.0;
}

// A call's modelled duration at full speed and its lane, as the engine's tasks report them once
// their peers have arrived (the same costs), known before any of them has. Its start is 0.
TaskTiming callTiming(const PendingCall& c) {
  const CostParams& cost = c.comm->plan().cost;
  const Endpoint& ep = c.comm->endpoint();
  if (c.is_p2p) {
    const LinkLevel level =
        linkLevel(ep.places()[static_cast<std::size_t>(ep.rank())], ep.places()[static_cast<std::size_t>(c.p2p.peer)]);
    return {0, p2pDurationNs(cost, c.bytes, level), 2 * c.p2p.peer + (c.p2p.is_send ? 0 : 1)};
  }
  const std::size_t bytes = collectiveBytes(c.coll.kind, c.coll.count, datatypeSize(c.coll.datatype), ep.nranks());
  return {0, collectiveDurationNs(cost, c.coll.kind, bytes, ep.places(), c.coll.channels), -1};
}

// The modelled duration of a fused operation at full speed (its calls combined as the engine
// combines them).
std::int64_t modelledDurationNs(const Fused& f) {
  std::vector<TaskTiming> timings;
  for (const PendingCall& c : f.calls) timings.push_back(callTiming(c));
  return combineTimings(timings).duration_ns;
}

// Runs `fn` with the calling thread's current device set to `device` (NCCL does the same:
// a call runs on its communicator's device whatever the caller's current device).
template <typename F>
auto onDevice(int device, F&& fn) {
  const int saved = simgpu::currentDevice();
  simgpu::setCurrentDevice(device);
  auto result = fn();
  simgpu::setCurrentDevice(saved);
  return result;
}

Status cancelledBy(int device) {
  if (simgpu::shuttingDown(device)) {
    return Status::error(ncclSystemError, "the process is exiting or device " + std::to_string(device) + " is being reset");
  }
  return Status::success();
}

// The profiler plugin's Coll/P2p event of a call, as its operation starts to run.
void* startOperationEvent(const PendingCall& call) {
  ncclProfilerEventDescr_v5_t descr{};
  descr.parentObj = call.api_event;
  descr.rank = call.comm->rank();
  if (call.is_p2p) {
    descr.type = ncclProfileP2p;
    descr.p2p.func = call.func;
    descr.p2p.buff = call.p2p.is_send ? const_cast<void*>(call.p2p.send) : call.p2p.recv;
    descr.p2p.datatype = profilerTypeName(call.p2p.datatype);
    descr.p2p.count = call.p2p.count;
    descr.p2p.peer = call.p2p.peer;
    descr.p2p.nChannels = 1;
  } else {
    const bool tree = call.coll.kind == CollKind::AllReduce && call.comm->plan().cost.algorithm == Algorithm::Tree;
    descr.type = ncclProfileColl;
    descr.coll.seqNumber = call.seq;
    descr.coll.func = call.func;
    descr.coll.sendBuff = call.coll.send;
    descr.coll.recvBuff = call.coll.recv;
    descr.coll.count = call.coll.count;
    descr.coll.root = call.coll.root;
    descr.coll.datatype = profilerTypeName(call.coll.datatype);
    descr.coll.nChannels = reportedChannels(call.coll.channels);
    descr.coll.algo = tree ? "TREE" : "RING";
    descr.coll.proto = "LL";
  }
  return startEvent(call.comm->profiler, descr);
}

void stopOperationEvent(const PendingCall& call, void* event) {
  stopEvent(call.comm->profiler, call.is_p2p ? ncclProfileP2p : ncclProfileColl, event);
}

// Why an operation waiting on `c` must give up: the communicator was aborted, or the process
// is exiting. Success while it may wait on.
Status stopReason(CommState& c, int device) {
  if (c.aborted()) return Status::error(ncclRemoteError, c.label() + " was aborted (ncclCommAbort)");
  return cancelledBy(device);
}

// The timing step of an operation of collectives only, on the stream's worker: every rank's
// arrival at each collective is exchanged, and nothing else, so that the operation is timed
// (its start is the last rank's arrival) before its data moves, on the stream's body thread
// (runFused). Data that lags far behind the model (large reductions on a loaded machine) then
// holds up no decision other streams take in model time.
simgpu::OpTiming timeFused(Fused& f, const simgpu::OpContext& ctx) {
  Status st;
  std::size_t held = 0;
  for (std::size_t i = 0; i < f.tickets.size(); ++i) {
    CommState& c = *f.tickets[i].first;
    st = c.timing_order.waitTurn(f.timing_tickets[i], c.plan().timeout_ns, [&] { return stopReason(c, ctx.device); });
    if (!st.ok()) break;
    ++held;
  }
  for (std::size_t i = 0; st.ok() && i < f.tickets.size(); ++i) st = f.tickets[i].first->usable(f.calls.front().kernel.data());
  TaskGroup group;
  if (st.ok()) {
    for (PendingCall& call : f.calls) {
      call.coll.arrival_ns = ctx.start_ns;
      group.addArrival(call.comm->endpoint(), call.coll, call.comm->plan().cost);
    }
    // While the peers have not all arrived, what they published of their arrivals already tells
    // the device that the collective starts no earlier (arrival_floors.hpp). Only a higher floor
    // is told, so that a wait that learns nothing new takes no scheduler lock.
    std::int64_t told = ctx.start_ns;
    const auto blocked = [&](std::int64_t now) {
      const std::int64_t floor = group.startFloor(now);
      if (floor <= told) return;
      told = floor;
      simgpu::raiseStartBound(ctx, floor);
    };
    st = group.run([&] { return cancelledBy(ctx.device); }, blocked);
  }
  for (std::size_t i = 0; i < f.tickets.size(); ++i) {
    CommState& c = *f.tickets[i].first;
    if (i < held) c.timing_order.done(f.timing_tickets[i]);
    else c.timing_order.cancel(f.timing_tickets[i]);
  }
  f.timing_status = st;
  if (!st.ok()) return simgpu::OpTiming{};
  f.timing = group.timing();
  return simgpu::OpTiming{f.timing.start_ns, f.timing.duration_ns, cudaSuccess};
}

// The body of a fused operation: on the stream's body thread after timeFused, or on its worker
// (operations with point-to-point calls, whose start is their peer's arrival alone).
simgpu::OpTiming runFused(Fused& f, const simgpu::OpContext& ctx) {
  const auto cancelled = [&] { return cancelledBy(ctx.device); };
  Status st = f.timing_status;  // a failed timing step moves no data
  std::size_t held = 0;
  for (auto& [comm, ticket] : f.tickets) {
    if (!st.ok()) break;
    CommState* c = comm.get();
    st = c->order.waitTurn(ticket, c->plan().timeout_ns, [&] { return stopReason(*c, ctx.device); });
    if (!st.ok()) break;
    ++held;
  }
  // A communicator that has failed (here or on a peer) runs nothing more.
  for (std::size_t i = 0; st.ok() && i < f.tickets.size(); ++i) st = f.tickets[i].first->usable(f.calls.front().kernel.data());
  TaskGroup group;
  std::vector<void*> events(f.calls.size(), nullptr);
  for (std::size_t i = 0; i < f.calls.size(); ++i) events[i] = startOperationEvent(f.calls[i]);
  if (st.ok()) {
    for (PendingCall& call : f.calls) {
      Endpoint& ep = call.comm->endpoint();
      if (call.is_p2p) {
        call.p2p.arrival_ns = ctx.start_ns;
        group.addP2p(ep, call.p2p, call.comm->plan().cost);
      } else {
        call.coll.arrival_ns = ctx.start_ns;
        group.addCollective(ep, call.coll, call.comm->plan().cost);
      }
    }
    st = group.run(cancelled);
  }
  for (std::size_t i = 0; i < f.tickets.size(); ++i) {
    auto& [comm, ticket] = f.tickets[i];
    if (i < held) comm->order.done(ticket);
    else comm->order.cancel(ticket);
  }
  if (!st.ok()) {
    for (auto& [comm, ticket] : f.tickets) comm->recordFailure(st);
    for (std::size_t i = 0; i < f.calls.size(); ++i) stopOperationEvent(f.calls[i], events[i]);
    return simgpu::OpTiming{};
  }
  const GroupTiming timing = f.timed_ahead ? f.timing : group.timing();
  const std::int64_t start = timing.start_ns != 0 ? timing.start_ns : ctx.start_ns;
  for (auto& [comm, ticket] : f.tickets) comm->noteModelEnd(start + timing.duration_ns);
  for (std::size_t i = 0; i < f.calls.size(); ++i) {
    const PendingCall& call = f.calls[i];
    kernelChannel(call.comm->profiler, events[i], call.comm->rank(), static_cast<std::uint64_t>(start),
                  static_cast<std::uint64_t>(start + timing.duration_ns));
    stopOperationEvent(call, events[i]);
  }
  return simgpu::OpTiming{timing.start_ns, timing.duration_ns, cudaSuccess};
}

simgpu::StreamOp makeStreamOp(std::shared_ptr<Fused> fused) {
  simgpu::StreamOp op;
  op.work_class = simgpu::WorkClass::Communication;
  const auto first_collective = std::find_if(fused->calls.begin(), fused->calls.end(),
                                             [](const PendingCall& c) { return !c.is_p2p; });
  op.kind = first_collective != fused->calls.end() ? simgpu::OpKind::Collective : simgpu::OpKind::P2P;
  op.name = first_collective != fused->calls.end() ? first_collective->kernel : fused->calls.front().kernel;
  for (const PendingCall& c : fused->calls) op.bytes += c.bytes;
  op.least_duration_ns = modelledDurationNs(*fused);
  op.interference_weight = interferenceWeightOf(*fused);
  op.peer_group = fused->tickets.size() == 1 ? peerGroupOf(*fused->tickets.front().first) : simgpu::kAnyPeerGroup;
  if (fused->timed_ahead) op.timing = [fused](const simgpu::OpContext& ctx) { return timeFused(*fused, ctx); };
  op.body = [fused](const simgpu::OpContext& ctx) { return runFused(*fused, ctx); };
  return op;
}

// Whether `stream` is capturing a CUDA graph, asked of the process's libcudart.so.13 itself
// (not of whatever interposes cudaStreamIsCapturing), on the current device.
bool capturing(cudaStream_t stream) {
  using IsCapturing = cudaError_t (*)(cudaStream_t, cudaStreamCaptureStatus*);
  static const IsCapturing is_capturing = [] {
    void* cudart = dlopen("libcudart.so.13", RTLD_LAZY | RTLD_NOLOAD);
    return cudart != nullptr ? reinterpret_cast<IsCapturing>(dlsym(cudart, "cudaStreamIsCapturing")) : nullptr;
  }();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return is_capturing != nullptr && is_capturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone;
}

// Tickets are taken and operations enqueued under one lock, so that on every stream the
// operations of a communicator sit in ticket order.
std::mutex g_launch_mu;

// Enqueues `f` after its communicators' previous launches, wherever they are (NCCL serialises a
// communicator's kernels across streams: CommState::last_launch), and makes it their last. With
// the launch lock held, on f's device.
cudaError_t enqueueInCommunicatorOrder(const std::shared_ptr<Fused>& f) {
  std::vector<simgpu::StreamPoint> after;
  for (const auto& [comm, ticket] : f->tickets) after.push_back(comm->last_launch);
  simgpu::StreamPoint at;
  if (cudaError_t err = simgpu::enqueueAfter(f->stream, makeStreamOp(f), after, &at); err != cudaSuccess) return err;
  for (const auto& [comm, ticket] : f->tickets) comm->last_launch = at;
  return cudaSuccess;
}

}  // namespace

Status launchCalls(std::vector<PendingCall> calls, const GroupApiEvent& group_api) {
  std::vector<Fused> fused = fuseByStream(std::move(calls));
  for (Fused& f : fused) assignChannels(f);
  for (const Fused& f : fused) {
    simgpu::StreamAttributes info;
    const cudaError_t err = onDevice(f.device, [&] { return simgpu::streamAttributes(f.stream, &info); });
    if (err != cudaSuccess) {
      return Status::error(ncclUnhandledCudaError, std::string(f.calls.front().kernel) + ": the stream is not valid (CUDA error " +
                                                       std::to_string(static_cast<int>(err)) + ")");
    }
    // Running the call now would be a silent lie: in a graph it runs when the graph does.
    if (onDevice(f.device, [&] { return capturing(f.stream); })) {
      return Status::error(ncclInvalidUsage,
                           std::string("nccl") + f.calls.front().func + " during CUDA graph capture is not simulated");
    }
  }
  std::lock_guard lock(g_launch_mu);
  for (Fused& f : fused) {
    f.timed_ahead = std::none_of(f.calls.begin(), f.calls.end(), [](const PendingCall& c) { return c.is_p2p; });
    for (const PendingCall& c : f.calls) {
      const bool seen = std::any_of(f.tickets.begin(), f.tickets.end(), [&](const auto& t) { return t.first == c.comm; });
      if (seen) continue;
      f.tickets.emplace_back(c.comm, c.comm->order.take());
      if (f.timed_ahead) f.timing_tickets.push_back(c.comm->timing_order.take());
    }
    auto shared = std::make_shared<Fused>(std::move(f));
    const int device = shared->device;
    const cudaStream_t stream = shared->stream;
    ncclProfilerEventDescr_v5_t launch{};
    launch.type = ncclProfileKernelLaunch;
    launch.parentObj = group_api.handle;
    launch.rank = shared->calls.front().comm->rank();
    launch.kernelLaunch.stream = stream;
    void* launch_event = startEvent(group_api.profiler, launch);
    const cudaError_t err = onDevice(device, [&] { return enqueueInCommunicatorOrder(shared); });
    stopEvent(group_api.profiler, ncclProfileKernelLaunch, launch_event);
    if (err != cudaSuccess) {
      for (auto& [comm, ticket] : shared->tickets) comm->order.cancel(ticket);
      for (std::size_t i = 0; i < shared->timing_tickets.size(); ++i) {
        shared->tickets[i].first->timing_order.cancel(shared->timing_tickets[i]);
      }
      return Status::error(ncclUnhandledCudaError, std::string("cannot enqueue ") + std::string(shared->calls.front().kernel) +
                                                       " on its stream (CUDA error " + std::to_string(static_cast<int>(err)) + ")");
    }
  }
  return Status::success();
}

Status copyWithoutKernel(const PendingCall& call, std::size_t bytes) {
  if (call.coll.send == call.coll.recv || bytes == 0) return Status::success();
  const cudaError_t err = onDevice(call.comm->device(), [&] {
    simgpu::CopyShape shape;
    shape.width = bytes;
    return simgpu::enqueueCopy(call.coll.recv, call.coll.send, shape, simgpu::CopyDirection::DeviceToDevice, call.stream,
                               /*wait=*/false);
  });
  if (err == cudaSuccess) return Status::success();
  return Status::error(ncclUnhandledCudaError, std::string("nccl") + call.func +
                                                   ": cannot copy sendbuff to recvbuff on the stream (CUDA error " +
                                                   std::to_string(static_cast<int>(err)) + ")");
}

float estimateMicroseconds(const std::vector<PendingCall>& calls) {
  std::int64_t longest = 0;
  for (Fused& f : fuseByStream(calls)) {
    assignChannels(f);
    longest = std::max(longest, modelledDurationNs(f));
  }
  return static_cast<float>(static_cast<double>(longest) / 1e3);
}

}  // namespace simgpu::nccl

// Stream and event objects over the scheduler: creation, destruction, queries, host syncs,
// event records and cross-stream waits.
#include "machine.hpp"

#include <simgpu/core/runtime.hpp>
#include <simgpu/core/streams.hpp>

#include <algorithm>

namespace simgpu {

using detail::Event;
using detail::Machine;
using detail::machine;
using detail::Stream;

namespace {

cudaStream_t handleOf(Stream* s) { return reinterpret_cast<cudaStream_t>(s); }

std::shared_ptr<Event> findEvent(Machine& m, cudaEvent_t handle) {
  auto it = m.events.find(reinterpret_cast<Event*>(handle));
  return it == m.events.end() ? nullptr : it->second;
}

// The shared owner of a resolved stream, so that a host wait survives its destruction.
std::shared_ptr<Stream> owned(Stream* s) {
  for (const auto& candidate : s->device->streams)
    if (candidate.get() == s) return candidate;
  return nullptr;
}

}  // namespace

cudaError_t createStream(int device, unsigned flags, int priority, cudaStream_t* out) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  if (!validDevice(device)) return cudaErrorInvalidDevice;
  if ((flags & ~static_cast<unsigned>(cudaStreamNonBlocking)) != 0) return cudaErrorInvalidValue;
  priority = std::clamp(priority, kGreatestStreamPriority, kLeastStreamPriority);
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  detail::Device& d = *m.devices[static_cast<std::size_t>(device)];
  if (d.sticky != cudaSuccess) return d.sticky;
  detail::reapStreams(d);
  auto s = detail::newStream(m, d, detail::StreamKind::User, flags, priority);
  m.user_streams.emplace(s.get(), s);
  *out = handleOf(s.get());
  return cudaSuccess;
}

cudaError_t destroyStream(cudaStream_t stream) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  auto it = m.user_streams.find(reinterpret_cast<Stream*>(stream));
  if (it == m.user_streams.end()) return cudaErrorInvalidResourceHandle;
  Stream& s = *it->second;
  m.user_streams.erase(it);
  detail::retireStream(s);
  detail::reapStreams(*s.device);
  return cudaSuccess;
}

cudaError_t queryStream(cudaStream_t stream) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  Stream* s = detail::resolveStream(m, stream);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  if (s->device->sticky != cudaSuccess) return s->device->sticky;
  return detail::queryLocked(m, *s) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t synchronizeStream(cudaStream_t stream) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::unique_lock lock(m.mu);
  Stream* s = detail::resolveStream(m, stream);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  std::shared_ptr<Stream> keep = owned(s);
  detail::synchronizeLocked(lock, m, *s);
  return s->device->sticky;
}

cudaError_t streamAttributes(cudaStream_t stream, StreamAttributes* out) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  Stream* s = detail::resolveStream(m, stream);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  *out = StreamAttributes{s->device->index, s->flags, s->priority, s->id};
  return cudaSuccess;
}

cudaError_t streamWaitEvent(cudaStream_t stream, cudaEvent_t event) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  Stream* s = detail::resolveStream(m, stream);
  std::shared_ptr<Event> e = findEvent(m, event);
  if (s == nullptr || !e) return cudaErrorInvalidResourceHandle;
  // The wait is for the event's latest record at the time of this call; a record that is
  // already complete (or none at all) leaves nothing to wait for.
  std::vector<detail::Watch> watches;
  if (e->recorded() && !e->complete() && e->stream.get() != s)
    watches.push_back(detail::Watch{e->stream.get(), e->seq, s});
  StreamOp op;
  op.work_class = WorkClass::Marker;
  op.kind = OpKind::StreamWait;
  op.name = "cudaStreamWaitEvent";
  return detail::enqueueLocked(m, *s, stream, std::move(op), std::move(watches));
}

cudaError_t enqueueAfter(cudaStream_t stream, StreamOp op, const std::vector<StreamPoint>& after, StreamPoint* at) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  Stream* s = detail::resolveStream(m, stream);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  // As streamWaitEvent: a point already completed, or on the op's own stream, adds nothing.
  std::vector<detail::Watch> watches;
  for (const StreamPoint& point : after) {
    const std::shared_ptr<void> alive = point.stream.lock();
    auto* producer = static_cast<Stream*>(alive.get());
    if (producer != nullptr && producer != s && producer->completed.load() < point.seq)
      watches.push_back(detail::Watch{producer, point.seq, s});
  }
  if (cudaError_t err = detail::enqueueLocked(m, *s, stream, std::move(op), std::move(watches)); err != cudaSuccess)
    return err;
  if (at != nullptr) *at = StreamPoint{owned(s), s->enqueued};
  return cudaSuccess;
}

cudaError_t enqueueAndWait(cudaStream_t stream, StreamOp op) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::unique_lock lock(m.mu);
  Stream* s = detail::resolveStream(m, stream);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  if (cudaError_t err = detail::enqueueLocked(m, *s, stream, std::move(op)); err != cudaSuccess) return err;
  std::shared_ptr<Stream> keep = owned(s);
  detail::waitForSeq(lock, *s, s->enqueued, detail::hostWaitFor(*s->device));
  return s->device->sticky;
}

cudaError_t launchHostFunc(cudaStream_t stream, void (*fn)(void*), void* user_data) {
  if (fn == nullptr) return cudaErrorInvalidValue;
  StreamOp op;
  op.work_class = WorkClass::Marker;
  op.kind = OpKind::HostFunc;
  op.name = "cudaLaunchHostFunc";
  op.body = [fn, user_data](const OpContext&) {
    fn(user_data);
    return OpTiming{};
  };
  return enqueue(stream, std::move(op));
}

cudaError_t createEvent(int device, unsigned flags, cudaEvent_t* out) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  if (!validDevice(device)) return cudaErrorInvalidDevice;
  constexpr unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
  if ((flags & ~known) != 0) return cudaErrorInvalidValue;
  // CUDA requires interprocess events to be created without timing.
  if ((flags & cudaEventInterprocess) != 0 && (flags & cudaEventDisableTiming) == 0)
    return cudaErrorInvalidValue;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  auto e = std::make_shared<Event>();
  e->device = m.devices[static_cast<std::size_t>(device)].get();
  e->flags = flags;
  m.events.emplace(e.get(), e);
  *out = reinterpret_cast<cudaEvent_t>(e.get());
  return cudaSuccess;
}

cudaError_t destroyEvent(cudaEvent_t event) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  // Pending records keep the object alive until they complete (their entries share it).
  return m.events.erase(reinterpret_cast<Event*>(event)) == 1 ? cudaSuccess
                                                              : cudaErrorInvalidResourceHandle;
}

bool liveEvent(cudaEvent_t event) {
  if (initialize() != cudaSuccess) return false;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  return findEvent(m, event) != nullptr;
}

cudaError_t recordEvent(cudaEvent_t event, cudaStream_t stream) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  Stream* s = detail::resolveStream(m, stream);
  std::shared_ptr<Event> e = findEvent(m, event);
  if (s == nullptr || !e) return cudaErrorInvalidResourceHandle;
  if (e->device != s->device) return cudaErrorInvalidResourceHandle;
  StreamOp op;
  op.work_class = WorkClass::Marker;
  op.kind = OpKind::EventRecord;
  op.name = "cudaEventRecord";
  const std::uint64_t gen = e->gen + 1;
  const cudaError_t err = detail::enqueueLocked(m, *s, stream, std::move(op), {}, e, gen);
  if (err != cudaSuccess) return err;
  e->gen = gen;
  e->stream = owned(s);
  e->seq = s->enqueued;
  return cudaSuccess;
}

cudaError_t queryEvent(cudaEvent_t event) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  std::shared_ptr<Event> e = findEvent(m, event);
  if (!e) return cudaErrorInvalidResourceHandle;
  if (e->device->sticky != cudaSuccess) return e->device->sticky;
  return e->complete() ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t synchronizeEvent(cudaEvent_t event) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::unique_lock lock(m.mu);
  std::shared_ptr<Event> e = findEvent(m, event);
  if (!e) return cudaErrorInvalidResourceHandle;
  if (!e->complete()) {
    std::shared_ptr<Stream> s = e->stream;
    const detail::HostWait how = (e->flags & cudaEventBlockingSync) != 0 ? detail::HostWait::Block
                                                                          : detail::hostWaitFor(*e->device);
    detail::waitForSeq(lock, *s, e->seq, how);
  }
  return e->device->sticky;
}

cudaError_t eventElapsedMs(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  if (ms == nullptr) return cudaErrorInvalidValue;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  std::shared_ptr<Event> a = findEvent(m, start);
  std::shared_ptr<Event> b = findEvent(m, end);
  if (!a || !b) return cudaErrorInvalidResourceHandle;
  if (((a->flags | b->flags) & cudaEventDisableTiming) != 0) return cudaErrorInvalidResourceHandle;
  if (!a->recorded() || !b->recorded()) return cudaErrorInvalidResourceHandle;
  if (!a->complete() || !b->complete()) return cudaErrorNotReady;
  *ms = static_cast<float>(static_cast<double>(b->time - a->time) / 1e6);
  return cudaSuccess;
}

cudaError_t eventTimeNs(cudaEvent_t event, TimeNs* out) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  std::shared_ptr<Event> e = findEvent(m, event);
  if (!e) return cudaErrorInvalidResourceHandle;
  if (!e->recorded()) return cudaErrorInvalidResourceHandle;
  if (!e->complete()) return cudaErrorNotReady;
  *out = e->time;
  return cudaSuccess;
}

}  // namespace simgpu

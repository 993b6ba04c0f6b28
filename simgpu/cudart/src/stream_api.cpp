// Streams and events. The per-thread default stream variants (_ptsz) treat stream 0 as the
// calling thread's per-thread default stream.
#include "api.hpp"
#include "capture.hpp"

#include <simgpu/core/runtime.hpp>
#include <simgpu/core/streams.hpp>

#include <algorithm>

using namespace simgpu;
using namespace simgpu::cudart;

namespace {

cudaError_t create(cudaStream_t* stream, unsigned flags, int priority) {
  if (stream == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(createStream(currentDevice(), flags, priority, stream));
}

template <typename Field>
cudaError_t info(cudaStream_t stream, Field* out, Field StreamAttributes::*field) {
  if (out == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  StreamAttributes i;
  if (cudaError_t err = streamAttributes(stream, &i); err != cudaSuccess) return fail(err);
  *out = i.*field;
  return cudaSuccess;
}

struct Callback {
  cudaStreamCallback_t fn;
  cudaStream_t stream;
  void* data;
};

cudaError_t addCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* userData, unsigned flags) {
  if (callback == nullptr || flags != 0) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  // Each enqueue (and each replay of a captured one) gets its own record, freed by its run.
  auto enqueueCallback = [callback, userData](cudaStream_t s) {
    auto* cb = new Callback{callback, s, userData};
    const cudaError_t err = launchHostFunc(s, [](void* p) {
      auto* c = static_cast<Callback*>(p);
      c->fn(c->stream, cudaSuccess, c->data);
      delete c;
    }, cb);
    if (err != cudaSuccess) delete cb;
    return err;
  };
  if (auto c = captureOp(stream, cudaGraphNodeTypeHost, enqueueCallback)) return done(*c);
  return done(enqueueCallback(stream));
}

cudaError_t hostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (fn == nullptr) return fail(cudaErrorInvalidValue);
  if (auto c = captureOp(stream, cudaGraphNodeTypeHost, [fn, userData](cudaStream_t s) { return launchHostFunc(s, fn, userData); }))
    return done(*c);
  return done(launchHostFunc(stream, fn, userData));
}

cudaError_t record(cudaEvent_t event, cudaStream_t stream, unsigned flags) {
  if (flags != cudaEventRecordDefault) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (auto c = captureEventRecord(event, stream)) return done(*c);
  return done(recordEvent(event, stream));
}

cudaError_t waitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags) {
  if ((flags & ~static_cast<unsigned>(cudaEventWaitExternal)) != 0) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (auto c = captureEventWait(stream, event, flags)) return done(*c);
  return done(streamWaitEvent(stream, event));
}

cudaError_t query(cudaStream_t stream) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (auto refused = refuseOnCapturingStream(stream)) return fail(*refused);
  return done(queryStream(stream));
}

cudaError_t synchronize(cudaStream_t stream) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (auto refused = refuseOnCapturingStream(stream)) return fail(*refused);
  return done(afterHostSync(synchronizeStream(stream)));
}

}  // namespace

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t* pStream) { return create(pStream, cudaStreamDefault, 0); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) { return create(pStream, flags, 0); }
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
  return create(pStream, flags, priority);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
    return fail(cudaErrorInvalidResourceHandle);
  return done(destroyStream(stream));
}

cudaError_t cudaStreamQuery(cudaStream_t stream) { return query(stream); }
cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) { return query(perThread(stream)); }
cudaError_t cudaStreamSynchronize(cudaStream_t stream) { return synchronize(stream); }
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) { return synchronize(perThread(stream)); }

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return waitEvent(stream, event, flags);
}
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return waitEvent(perThread(stream), event, flags);
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int* priority) {
  return info(hStream, priority, &StreamAttributes::priority);
}
cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int* priority) {
  return info(perThread(hStream), priority, &StreamAttributes::priority);
}
cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int* flags) {
  return info(hStream, flags, &StreamAttributes::flags);
}
cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int* flags) {
  return info(perThread(hStream), flags, &StreamAttributes::flags);
}
cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long* streamId) {
  return info(hStream, streamId, &StreamAttributes::id);
}
cudaError_t cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long* streamId) {
  return info(perThread(hStream), streamId, &StreamAttributes::id);
}
cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int* device) {
  return info(hStream, device, &StreamAttributes::device);
}
cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t hStream, int* device) {
  return info(perThread(hStream), device, &StreamAttributes::device);
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* userData,
                                  unsigned int flags) {
  return addCallback(stream, callback, userData, flags);
}
cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback, void* userData,
                                       unsigned int flags) {
  return addCallback(perThread(stream), callback, userData, flags);
}
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  return hostFunc(stream, fn, userData);
}
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  return hostFunc(perThread(stream), fn, userData);
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  if (event == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(createEvent(currentDevice(), cudaEventDefault, event));
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  if (event == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(createEvent(currentDevice(), flags, event));
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(destroyEvent(event));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) { return record(event, stream, 0); }
cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) { return record(event, perThread(stream), 0); }
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  return record(event, stream, flags);
}
cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  return record(event, perThread(stream), flags);
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (auto refused = refuseCapturedEvent(event)) return fail(*refused);
  return done(queryEvent(event));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (auto refused = refuseCapturedEvent(event)) return fail(*refused);
  return done(afterHostSync(synchronizeEvent(event)));
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return done(eventElapsedMs(ms, start, end));
}

}  // extern "C"

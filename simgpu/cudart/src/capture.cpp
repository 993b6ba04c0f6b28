// Stream capture with CUDA's rules: a capture sequence starts on one stream, other streams
// join it by waiting on an event recorded in it, and it must be ended on its origin stream
// once every joined stream has been joined back. Work on a capturing stream becomes graph
// nodes; synchronising or querying a capturing stream, and the "potentially unsafe" calls the
// capture mode forbids, fail and invalidate the capture.
#include "capture.hpp"

#include "api.hpp"

#include <simgpu/core/runtime.hpp>
#include <simgpu/core/streams.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

using namespace simgpu;
using namespace simgpu::cudart;

namespace simgpu::cudart {
namespace {

struct Sequence {
  unsigned long long id = 0;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id thread;
  unsigned long long origin = 0;  // stream id
  std::unique_ptr<Graph> graph;
  bool invalidated = false;
};

struct Member {
  Sequence* sequence = nullptr;
  std::vector<GraphNode*> dependencies;  // what the stream's next captured op depends on
  int device = 0;
  bool blocking = true;
};

struct CapturedEvent {
  Sequence* sequence = nullptr;
  std::vector<GraphNode*> dependencies;
};

struct State {
  std::mutex mu;
  std::atomic<int> active{0};
  std::unordered_map<unsigned long long, Member> members;  // by stream id
  std::unordered_map<cudaEvent_t, CapturedEvent> events;
  std::vector<std::unique_ptr<Sequence>> sequences;
  unsigned long long next_id = 1;
};

State& state() {
  static State* const s = new State();  // captures may end in late static destructors
  return *s;
}

thread_local cudaStreamCaptureMode t_mode = cudaStreamCaptureModeGlobal;

bool isLegacy(cudaStream_t stream) { return stream == nullptr || stream == cudaStreamLegacy; }

// A capture of a blocking stream of `device` that work on the legacy stream would depend on.
Sequence* blockingCaptureOn(State& st, int device) {
  for (auto& [id, m] : st.members)
    if (m.device == device && m.blocking) return m.sequence;
  return nullptr;
}

GraphNode* addNode(Member& m, cudaGraphNodeType type, const Replay& replay) {
  auto node = std::make_unique<GraphNode>();
  node->type = type;
  node->replay = replay;
  node->dependencies = m.dependencies;
  GraphNode* raw = node.get();
  m.sequence->graph->nodes.push_back(std::move(node));
  m.dependencies = {raw};
  return raw;
}

// Every node that `roots` depend on, themselves included.
std::set<const GraphNode*> ancestors(const std::vector<GraphNode*>& roots) {
  std::set<const GraphNode*> seen;
  std::vector<const GraphNode*> todo(roots.begin(), roots.end());
  while (!todo.empty()) {
    const GraphNode* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    todo.insert(todo.end(), n->dependencies.begin(), n->dependencies.end());
  }
  return seen;
}

// Ends `seq`: its streams and events leave capture. Called with the lock held.
void terminate(State& st, Sequence* seq) {
  std::erase_if(st.members, [&](const auto& item) { return item.second.sequence == seq; });
  std::erase_if(st.events, [&](const auto& item) { return item.second.sequence == seq; });
  std::erase_if(st.sequences, [&](const auto& s) { return s.get() == seq; });
  --st.active;
}

struct Resolved {
  StreamAttributes info;
  bool valid = false;
};

Resolved resolve(cudaStream_t stream) {
  Resolved r;
  r.valid = streamAttributes(stream, &r.info) == cudaSuccess;
  return r;
}

}  // namespace

bool anyCapture() { return state().active.load(std::memory_order_acquire) > 0; }

std::optional<cudaError_t> captureOp(cudaStream_t stream, cudaGraphNodeType type, const Replay& replay) {
  if (!anyCapture()) return std::nullopt;
  const Resolved r = resolve(stream);
  if (!r.valid) return std::nullopt;  // the op's own path reports the bad handle
  State& st = state();
  std::lock_guard lock(st.mu);
  if (isLegacy(stream)) {
    if (Sequence* seq = blockingCaptureOn(st, r.info.device)) {
      seq->invalidated = true;
      return cudaErrorStreamCaptureImplicit;
    }
    return std::nullopt;
  }
  auto it = st.members.find(r.info.id);
  if (it == st.members.end()) return std::nullopt;
  Member& m = it->second;
  if (m.sequence->invalidated) return cudaErrorStreamCaptureInvalidated;
  addNode(m, type, replay);
  return cudaSuccess;
}

std::optional<cudaError_t> captureKernel(const KernelInfo& kernel, dim3 grid, dim3 block, void** args,
                                         std::size_t shared_bytes, cudaStream_t stream) {
  if (!anyCapture()) return std::nullopt;
  const Resolved r = resolve(stream);
  if (!r.valid) return std::nullopt;
  {
    State& st = state();
    std::lock_guard lock(st.mu);
    const bool involved = isLegacy(stream) ? blockingCaptureOn(st, r.info.device) != nullptr
                                           : st.members.count(r.info.id) != 0;
    if (!involved) return std::nullopt;
  }
  if (cudaError_t err = validateLaunch(kernel, grid, block, shared_bytes); err != cudaSuccess) return err;
  if (!isLegacy(stream) && !kernel.layout_known) {
    reportNotSimulated("capturing a launch of " + kernel.mangled +
                       " (its parameter layout is unknown, so its arguments cannot be kept)");
    return refuseOnCapturingStream(stream);
  }
  const Replay replay = kernelReplay(kernel, grid, block, args, shared_bytes);
  return captureOp(stream, cudaGraphNodeTypeKernel, replay);
}

std::optional<cudaError_t> captureEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!anyCapture()) return std::nullopt;
  const Resolved r = resolve(stream);
  if (!r.valid) return std::nullopt;
  State& st = state();
  std::lock_guard lock(st.mu);
  if (isLegacy(stream)) {
    if (Sequence* seq = blockingCaptureOn(st, r.info.device)) {
      seq->invalidated = true;
      return cudaErrorStreamCaptureImplicit;
    }
  }
  auto it = st.members.find(r.info.id);
  if (it == st.members.end()) {
    st.events.erase(event);  // recorded outside capture from now on
    return std::nullopt;
  }
  st.events[event] = CapturedEvent{it->second.sequence, it->second.dependencies};
  return cudaSuccess;
}

std::optional<cudaError_t> captureEventWait(cudaStream_t stream, cudaEvent_t event, unsigned flags) {
  if (!anyCapture()) return std::nullopt;
  const Resolved r = resolve(stream);
  if (!r.valid) return std::nullopt;
  State& st = state();
  std::lock_guard lock(st.mu);
  auto ev = st.events.find(event);
  auto member = st.members.find(r.info.id);
  if (ev != st.events.end()) {
    if (member == st.members.end()) {
      if (isLegacy(stream)) return cudaErrorStreamCaptureImplicit;
      // The stream joins the capture (a fork), continuing from the event's point.
      st.members[r.info.id] = Member{ev->second.sequence, ev->second.dependencies, r.info.device,
                                     r.info.flags != cudaStreamNonBlocking};
      return cudaSuccess;
    }
    if (member->second.sequence != ev->second.sequence) {
      member->second.sequence->invalidated = true;
      return cudaErrorStreamCaptureMerge;
    }
    auto& deps = member->second.dependencies;
    for (GraphNode* n : ev->second.dependencies)
      if (std::find(deps.begin(), deps.end(), n) == deps.end()) deps.push_back(n);
    return cudaSuccess;
  }
  if (member == st.members.end()) return std::nullopt;
  if ((flags & cudaEventWaitExternal) == 0) {
    member->second.sequence->invalidated = true;
    return cudaErrorStreamCaptureIsolation;
  }
  addNode(member->second, cudaGraphNodeTypeWaitEvent, [event](cudaStream_t s) { return streamWaitEvent(s, event); });
  return cudaSuccess;
}

std::optional<cudaError_t> refuseOnCapturingStream(cudaStream_t stream) {
  if (!anyCapture()) return std::nullopt;
  const Resolved r = resolve(stream);
  if (!r.valid) return std::nullopt;
  State& st = state();
  std::lock_guard lock(st.mu);
  if (isLegacy(stream)) {
    if (Sequence* seq = blockingCaptureOn(st, r.info.device)) {
      seq->invalidated = true;
      return cudaErrorStreamCaptureImplicit;
    }
    return std::nullopt;
  }
  auto it = st.members.find(r.info.id);
  if (it == st.members.end()) return std::nullopt;
  it->second.sequence->invalidated = true;
  return cudaErrorStreamCaptureUnsupported;
}

std::optional<cudaError_t> refuseUnsafeDuringCapture() {
  if (!anyCapture() || t_mode == cudaStreamCaptureModeRelaxed) return std::nullopt;
  State& st = state();
  std::lock_guard lock(st.mu);
  const std::thread::id me = std::this_thread::get_id();
  bool refused = false;
  for (auto& seq : st.sequences) {
    const bool mine = seq->thread == me && seq->mode != cudaStreamCaptureModeRelaxed;
    const bool global_elsewhere =
        t_mode == cudaStreamCaptureModeGlobal && seq->thread != me && seq->mode == cudaStreamCaptureModeGlobal;
    if (mine || global_elsewhere) {
      seq->invalidated = true;
      refused = true;
    }
  }
  return refused ? std::optional<cudaError_t>(cudaErrorStreamCaptureUnsupported) : std::nullopt;
}

std::optional<cudaError_t> refuseCapturedEvent(cudaEvent_t event) {
  if (!anyCapture()) return std::nullopt;
  State& st = state();
  std::lock_guard lock(st.mu);
  return st.events.count(event) != 0 ? std::optional<cudaError_t>(cudaErrorCapturedEvent) : std::nullopt;
}

}  // namespace simgpu::cudart

namespace {

cudaError_t beginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
      mode != cudaStreamCaptureModeRelaxed)
    return fail(cudaErrorInvalidValue);
  if (isLegacy(stream)) return fail(cudaErrorStreamCaptureUnsupported);
  const Resolved r = resolve(stream);
  if (!r.valid) return fail(cudaErrorInvalidResourceHandle);
  State& st = state();
  std::lock_guard lock(st.mu);
  if (st.members.count(r.info.id) != 0) return fail(cudaErrorIllegalState);
  auto seq = std::make_unique<Sequence>();
  seq->id = st.next_id++;
  seq->mode = mode;
  seq->thread = std::this_thread::get_id();
  seq->origin = r.info.id;
  seq->graph = std::make_unique<Graph>();
  st.members[r.info.id] = Member{seq.get(), {}, r.info.device, r.info.flags != cudaStreamNonBlocking};
  st.sequences.push_back(std::move(seq));
  ++st.active;
  return cudaSuccess;
}

cudaError_t endCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  if (pGraph == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const Resolved r = resolve(stream);
  if (!r.valid) return fail(cudaErrorInvalidResourceHandle);
  State& st = state();
  std::lock_guard lock(st.mu);
  auto it = st.members.find(r.info.id);
  if (it == st.members.end()) return fail(cudaErrorIllegalState);
  Sequence* seq = it->second.sequence;
  if (seq->origin != r.info.id) return fail(cudaErrorStreamCaptureUnmatched);
  if (seq->mode != cudaStreamCaptureModeRelaxed && seq->thread != std::this_thread::get_id())
    return fail(cudaErrorStreamCaptureWrongThread);
  *pGraph = nullptr;
  cudaError_t result = cudaSuccess;
  if (seq->invalidated) {
    result = cudaErrorStreamCaptureInvalidated;
  } else {
    // Every stream that joined must have been joined back into the origin stream.
    const std::set<const GraphNode*> joined = ancestors(it->second.dependencies);
    for (const auto& [id, m] : st.members)
      if (m.sequence == seq)
        for (const GraphNode* n : m.dependencies)
          if (joined.count(n) == 0) result = cudaErrorStreamCaptureUnjoined;
  }
  if (result == cudaSuccess) *pGraph = adoptGraph(std::move(seq->graph));
  terminate(st, seq);
  return done(result);
}

cudaError_t isCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  if (status == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const Resolved r = resolve(stream);
  if (!r.valid) return fail(cudaErrorInvalidResourceHandle);
  *status = cudaStreamCaptureStatusNone;
  if (!anyCapture()) return cudaSuccess;
  State& st = state();
  std::lock_guard lock(st.mu);
  if (isLegacy(stream)) {
    // Asking about the legacy stream while a blocking stream captures is itself an implicit
    // dependency on that capture.
    return blockingCaptureOn(st, r.info.device) != nullptr ? fail(cudaErrorStreamCaptureImplicit) : cudaSuccess;
  }
  auto it = st.members.find(r.info.id);
  if (it != st.members.end())
    *status = it->second.sequence->invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

cudaError_t captureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                        cudaGraph_t* graph, const cudaGraphNode_t** dependencies,
                        const cudaGraphEdgeData** edge_data, size_t* count) {
  if (cudaError_t err = isCapturing(stream, status); err != cudaSuccess) return err;
  if (*status == cudaStreamCaptureStatusNone) return cudaSuccess;
  const Resolved r = resolve(stream);
  State& st = state();
  std::lock_guard lock(st.mu);
  auto it = st.members.find(r.info.id);
  if (it == st.members.end()) {  // ended concurrently
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
  }
  Member& m = it->second;
  if (id != nullptr) *id = m.sequence->id;
  if (graph != nullptr) *graph = reinterpret_cast<cudaGraph_t>(m.sequence->graph.get());
  if (dependencies != nullptr) *dependencies = reinterpret_cast<const cudaGraphNode_t*>(m.dependencies.data());
  if (edge_data != nullptr) *edge_data = nullptr;  // every edge is a default one
  if (count != nullptr) *count = m.dependencies.size();
  return cudaSuccess;
}

}  // namespace

extern "C" {

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) { return beginCapture(stream, mode); }
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, cudaStreamCaptureMode mode) {
  return beginCapture(perThread(stream), mode);
}
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) { return endCapture(stream, pGraph); }
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* pGraph) {
  return endCapture(perThread(stream), pGraph);
}
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* pCaptureStatus) {
  return isCapturing(stream, pCaptureStatus);
}
cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* pCaptureStatus) {
  return isCapturing(perThread(stream), pCaptureStatus);
}
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* captureStatus_out,
                                     unsigned long long* id_out, cudaGraph_t* graph_out,
                                     const cudaGraphNode_t** dependencies_out,
                                     const cudaGraphEdgeData** edgeData_out, size_t* numDependencies_out) {
  return captureInfo(stream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out);
}
cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* captureStatus_out,
                                          unsigned long long* id_out, cudaGraph_t* graph_out,
                                          const cudaGraphNode_t** dependencies_out,
                                          const cudaGraphEdgeData** edgeData_out, size_t* numDependencies_out) {
  return captureInfo(perThread(stream), captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                     numDependencies_out);
}

cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  if (mode == nullptr) return fail(cudaErrorInvalidValue);
  if (*mode != cudaStreamCaptureModeGlobal && *mode != cudaStreamCaptureModeThreadLocal &&
      *mode != cudaStreamCaptureModeRelaxed)
    return fail(cudaErrorInvalidValue);
  std::swap(*mode, t_mode);
  return cudaSuccess;
}

}  // extern "C"

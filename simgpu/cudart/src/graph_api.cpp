// Graphs through the runtime API: built node by node (kernel, memcpy, memset, host, event
// record and wait, and empty nodes, each with its dependencies), or made by stream capture;
// instantiated, uploaded, launched and destroyed. Child graphs, memory nodes, conditional and
// external-semaphore nodes, node updates and device-side launch are not simulated.
#include "api.hpp"
#include "capture.hpp"
#include "graph.hpp"

#include <simgpu/core/copies.hpp>
#include <simgpu/core/kernels.hpp>
#include <simgpu/core/memory.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/streams.hpp>

#include <algorithm>

using namespace simgpu;
using namespace simgpu::cudart;

namespace {

bool contains(const Graph& g, const GraphNode* node) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [&](const auto& n) { return n.get() == node; });
}

// Adds a node whose work `replay` enqueues (none for an empty node) after `dependencies`,
// which must be distinct nodes of the same graph.
cudaError_t addNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* dependencies, size_t count,
                    cudaGraphNodeType type, Replay replay) {
  if (out == nullptr || (count > 0 && dependencies == nullptr)) return fail(cudaErrorInvalidValue);
  GraphRegistry& r = graphRegistry();
  std::lock_guard lock(r.mu);
  auto* g = reinterpret_cast<Graph*>(graph);
  if (r.graphs.count(g) == 0) return fail(cudaErrorInvalidValue);
  auto node = std::make_unique<GraphNode>();
  node->type = type;
  node->replay = std::move(replay);
  for (size_t i = 0; i < count; ++i) {
    auto* dependency = reinterpret_cast<GraphNode*>(dependencies[i]);
    const auto& deps = node->dependencies;
    if (!contains(*g, dependency) || std::find(deps.begin(), deps.end(), dependency) != deps.end())
      return fail(cudaErrorInvalidValue);
    node->dependencies.push_back(dependency);
  }
  *out = reinterpret_cast<cudaGraphNode_t>(node.get());
  g->nodes.push_back(std::move(node));
  return cudaSuccess;
}

const KernelInfo* kernelOf(const void* func) {
  if (const KernelInfo* k = findKernel(func)) return k;
  return kernelFromHandle(func);  // kernel nodes also take a cudaKernel_t
}

cudaError_t kernelNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count,
                       const cudaKernelNodeParams* p) {
  if (p == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const KernelInfo* k = kernelOf(p->func);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  if (p->kernelParams != nullptr && p->extra != nullptr) return fail(cudaErrorInvalidValue);
  if (p->extra != nullptr) {
    reportNotSimulated("cudaGraphAddKernelNode with its arguments in `extra`");
    return fail(cudaErrorNotSupported);
  }
  if (!k->layout_known) {
    reportNotSimulated("a kernel node of " + k->mangled +
                       " (its parameter layout is unknown, so its arguments cannot be kept)");
    return fail(cudaErrorNotSupported);
  }
  if (p->kernelParams == nullptr && !k->params.empty()) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = validateLaunch(*k, p->gridDim, p->blockDim, p->sharedMemBytes); err != cudaSuccess)
    return fail(err);
  return addNode(out, graph, deps, count, cudaGraphNodeTypeKernel,
                 kernelReplay(*k, p->gridDim, p->blockDim, p->kernelParams, p->sharedMemBytes));
}

// A copy node of `shape` (validated now: the direction, the pitches).
cudaError_t copyNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count, void* dst,
                     const void* src, const CopyShape& shape, cudaMemcpyKind kind) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  CopyDirection direction = CopyDirection::None;
  if (cudaError_t err = copyDirection(dst, src, kind, &direction); err != cudaSuccess) return fail(err);
  if (shape.bytes() > 0 && (dst == nullptr || src == nullptr)) return fail(cudaErrorInvalidValue);
  if (shape.height > 1 && (shape.dst_pitch < shape.width || shape.src_pitch < shape.width))
    return fail(cudaErrorInvalidValue);
  return addNode(out, graph, deps, count, cudaGraphNodeTypeMemcpy,
                 [=](cudaStream_t s) { return enqueueCopy(dst, src, shape, direction, s, false); });
}

cudaError_t memcpyNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count,
                       const cudaMemcpy3DParms* p) {
  if (p == nullptr) return fail(cudaErrorInvalidValue);
  if (p->srcArray != nullptr || p->dstArray != nullptr) {
    reportNotSimulated("cudaGraphAddMemcpyNode with CUDA arrays");
    return fail(cudaErrorNotSupported);
  }
  if (p->extent.depth > 1 || p->srcPos.z != 0 || p->dstPos.z != 0) {
    reportNotSimulated("cudaGraphAddMemcpyNode of a 3D extent");
    return fail(cudaErrorNotSupported);
  }
  CopyShape shape;
  shape.width = p->extent.depth == 0 ? 0 : p->extent.width;
  shape.height = p->extent.height;
  shape.dst_pitch = p->dstPtr.pitch;
  shape.src_pitch = p->srcPtr.pitch;
  auto* dst = static_cast<std::byte*>(p->dstPtr.ptr);
  const auto* src = static_cast<const std::byte*>(p->srcPtr.ptr);
  if (dst != nullptr) dst += p->dstPos.y * p->dstPtr.pitch + p->dstPos.x;
  if (src != nullptr) src += p->srcPos.y * p->srcPtr.pitch + p->srcPos.x;
  return copyNode(out, graph, deps, count, dst, src, shape, p->kind);
}

cudaError_t memsetNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count,
                       const cudaMemsetParams* p) {
  if (p == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) return fail(cudaErrorInvalidValue);
  CopyShape shape;
  shape.width = p->width * p->elementSize;
  shape.height = p->height;
  shape.dst_pitch = p->pitch;
  if (shape.height > 1 && shape.dst_pitch < shape.width) return fail(cudaErrorInvalidValue);
  if (shape.bytes() > 0 && lookupPointer(p->dst).kind == MemoryKind::Pageable) return fail(cudaErrorInvalidValue);
  const unsigned value = p->value;
  const unsigned element_size = p->elementSize;
  void* dst = p->dst;
  return addNode(out, graph, deps, count, cudaGraphNodeTypeMemset,
                 [=](cudaStream_t s) { return enqueueFill(dst, value, element_size, shape, s); });
}

cudaError_t eventNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count,
                      cudaEvent_t event, cudaGraphNodeType type) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  if (!liveEvent(event)) return fail(cudaErrorInvalidValue);
  Replay replay;
  if (type == cudaGraphNodeTypeEventRecord)
    replay = [event](cudaStream_t s) { return recordEvent(event, s); };
  else
    replay = [event](cudaStream_t s) { return streamWaitEvent(s, event); };
  return addNode(out, graph, deps, count, type, std::move(replay));
}

GraphExec* liveExec(GraphRegistry& r, cudaGraphExec_t handle) {
  auto* exec = reinterpret_cast<GraphExec*>(handle);
  return r.execs.count(exec) != 0 ? exec : nullptr;
}

cudaError_t instantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  if (pGraphExec == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  constexpr unsigned long long known = cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUpload |
                                       cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUseNodePriority;
  // Uploading at instantiation needs a stream, which only cudaGraphInstantiateWithParams gives.
  if ((flags & ~known) != 0 || (flags & cudaGraphInstantiateFlagUpload) != 0) return fail(cudaErrorInvalidValue);
  if ((flags & cudaGraphInstantiateFlagDeviceLaunch) != 0) {
    if ((flags & cudaGraphInstantiateFlagAutoFreeOnLaunch) != 0) return fail(cudaErrorInvalidValue);
    reportNotSimulated("graphs instantiated for launch from the device");
    return fail(cudaErrorNotSupported);
  }
  // Automatic frees concern memory nodes (not simulated, so there is nothing to free); node
  // priorities come from kernel node attributes (not simulated either): both flags change nothing.
  GraphRegistry& r = graphRegistry();
  std::lock_guard lock(r.mu);
  auto* g = reinterpret_cast<Graph*>(graph);
  if (r.graphs.count(g) == 0) return fail(cudaErrorInvalidValue);
  auto exec = std::make_unique<GraphExec>();
  for (const auto& node : g->nodes)
    if (node->replay) exec->ops.push_back(node->replay);
  *pGraphExec = reinterpret_cast<cudaGraphExec_t>(exec.get());
  r.execs.insert(exec.release());
  return cudaSuccess;
}

// Orders `stream` behind the executable graph's previous launches.
cudaError_t followPreviousLaunches(GraphExec& exec, cudaStream_t stream) {
  return exec.last_launch == nullptr ? cudaSuccess : streamWaitEvent(stream, exec.last_launch);
}

cudaError_t recordLaunch(GraphExec& exec, cudaStream_t stream) {
  StreamAttributes info;
  if (cudaError_t err = streamAttributes(stream, &info); err != cudaSuccess) return err;
  if (exec.last_launch_device != info.device) {
    if (exec.last_launch != nullptr) destroyEvent(exec.last_launch);
    exec.last_launch = nullptr;
    if (cudaError_t err = createEvent(info.device, cudaEventDisableTiming, &exec.last_launch); err != cudaSuccess)
      return err;
    exec.last_launch_device = info.device;
  }
  return recordEvent(exec.last_launch, stream);
}

// The executable graph, locked for one launch or upload, with the stream checked: nothing is
// enqueued for a bad handle.
cudaError_t beginUse(cudaGraphExec_t graphExec, cudaStream_t stream, GraphExec** out, std::unique_lock<std::mutex>* held) {
  if (cudaError_t err = enter(); err != cudaSuccess) return err;
  StreamAttributes info;
  if (cudaError_t err = streamAttributes(stream, &info); err != cudaSuccess) return err;
  if (auto refused = refuseOnCapturingStream(stream)) {
    if (*refused == cudaErrorStreamCaptureUnsupported) reportNotSimulated("launching a graph into a capture (child graphs)");
    return *refused;
  }
  GraphRegistry& r = graphRegistry();
  std::lock_guard lock(r.mu);
  GraphExec* exec = liveExec(r, graphExec);
  if (exec == nullptr) return cudaErrorInvalidValue;
  *held = std::unique_lock(exec->mu);
  *out = exec;
  return cudaSuccess;
}

cudaError_t launchGraph(cudaGraphExec_t graphExec, cudaStream_t stream) {
  GraphExec* exec = nullptr;
  std::unique_lock<std::mutex> held;
  if (cudaError_t err = beginUse(graphExec, stream, &exec, &held); err != cudaSuccess) return fail(err);
  if (cudaError_t err = followPreviousLaunches(*exec, stream); err != cudaSuccess) return fail(err);
  for (const Replay& op : exec->ops)
    if (cudaError_t err = op(stream); err != cudaSuccess) return fail(err);
  return done(recordLaunch(*exec, stream));
}

// simgpu has nothing to upload; what remains is the upload's place in its stream, behind the
// graph's previous launches.
cudaError_t uploadGraph(cudaGraphExec_t graphExec, cudaStream_t stream) {
  GraphExec* exec = nullptr;
  std::unique_lock<std::mutex> held;
  if (cudaError_t err = beginUse(graphExec, stream, &exec, &held); err != cudaSuccess) return fail(err);
  return done(followPreviousLaunches(*exec, stream));
}

}  // namespace

extern "C" {

cudaError_t cudaGraphCreate(cudaGraph_t* pGraph, unsigned int flags) {
  if (pGraph == nullptr || flags != 0) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  *pGraph = adoptGraph(std::make_unique<Graph>());
  return cudaSuccess;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                   size_t numDependencies, const cudaKernelNodeParams* pNodeParams) {
  return kernelNode(pGraphNode, graph, pDependencies, numDependencies, pNodeParams);
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                   size_t numDependencies, const cudaMemcpy3DParms* pCopyParams) {
  return memcpyNode(pGraphNode, graph, pDependencies, numDependencies, pCopyParams);
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                     const cudaGraphNode_t* pDependencies, size_t numDependencies, void* dst,
                                     const void* src, size_t count, cudaMemcpyKind kind) {
  CopyShape shape;
  shape.width = count;
  return copyNode(pGraphNode, graph, pDependencies, numDependencies, dst, src, shape, kind);
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                   size_t numDependencies, const cudaMemsetParams* pMemsetParams) {
  return memsetNode(pGraphNode, graph, pDependencies, numDependencies, pMemsetParams);
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                 size_t numDependencies, const cudaHostNodeParams* pNodeParams) {
  if (pNodeParams == nullptr || pNodeParams->fn == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  const cudaHostFn_t fn = pNodeParams->fn;
  void* data = pNodeParams->userData;
  return addNode(pGraphNode, graph, pDependencies, numDependencies, cudaGraphNodeTypeHost,
                 [fn, data](cudaStream_t s) { return launchHostFunc(s, fn, data); });
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                        const cudaGraphNode_t* pDependencies, size_t numDependencies,
                                        cudaEvent_t event) {
  return eventNode(pGraphNode, graph, pDependencies, numDependencies, event, cudaGraphNodeTypeEventRecord);
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                      const cudaGraphNode_t* pDependencies, size_t numDependencies,
                                      cudaEvent_t event) {
  return eventNode(pGraphNode, graph, pDependencies, numDependencies, event, cudaGraphNodeTypeWaitEvent);
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                  size_t numDependencies) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  return addNode(pGraphNode, graph, pDependencies, numDependencies, cudaGraphNodeTypeEmpty, Replay());
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* numNodes) {
  if (numNodes == nullptr) return fail(cudaErrorInvalidValue);
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  GraphRegistry& r = graphRegistry();
  std::lock_guard lock(r.mu);
  auto* g = reinterpret_cast<Graph*>(graph);
  if (r.graphs.count(g) == 0) return fail(cudaErrorInvalidValue);
  if (nodes != nullptr)
    for (std::size_t i = 0; i < std::min(*numNodes, g->nodes.size()); ++i)
      nodes[i] = reinterpret_cast<cudaGraphNode_t>(g->nodes[i].get());
  *numNodes = g->nodes.size();
  return cudaSuccess;
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType* pType) {
  if (node == nullptr || pType == nullptr) return fail(cudaErrorInvalidValue);
  GraphRegistry& r = graphRegistry();
  std::lock_guard lock(r.mu);
  auto* n = reinterpret_cast<GraphNode*>(node);
  const bool known = std::any_of(r.graphs.begin(), r.graphs.end(), [&](const Graph* g) { return contains(*g, n); });
  if (!known) return fail(cudaErrorInvalidValue);
  *pType = n->type;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  return instantiate(pGraphExec, graph, flags);
}
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  return instantiate(pGraphExec, graph, flags);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) { return launchGraph(graphExec, stream); }
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return launchGraph(graphExec, perThread(stream));
}
cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream) { return uploadGraph(graphExec, stream); }
cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return uploadGraph(graphExec, perThread(stream));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  GraphRegistry& r = graphRegistry();
  std::lock_guard lock(r.mu);
  auto* g = reinterpret_cast<Graph*>(graph);
  if (r.graphs.erase(g) == 0) return fail(cudaErrorInvalidValue);
  delete g;
  return cudaSuccess;
}

// A launch in flight finishes: its work is already enqueued and owns what it needs.
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  if (cudaError_t err = enter(); err != cudaSuccess) return fail(err);
  GraphRegistry& r = graphRegistry();
  GraphExec* exec = nullptr;
  {
    std::lock_guard lock(r.mu);
    exec = liveExec(r, graphExec);
    if (exec == nullptr) return fail(cudaErrorInvalidValue);
    r.execs.erase(exec);
  }
  {
    std::lock_guard wait_for_use(exec->mu);  // a launch of another thread under way ends first
  }
  if (exec->last_launch != nullptr) destroyEvent(exec->last_launch);
  delete exec;
  return cudaSuccess;
}

}  // extern "C"

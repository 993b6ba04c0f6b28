// What an intercepted call does, described once for every layer. Each entry of the API lists
// (cudart_api.inc, driver_api.inc, nccl_api.inc) names its CallClass and the roles of its
// arguments (call_roles.inc); a layer's generated wrapper fills a CallFacts from them on its
// stack and hands it, with the real call, to what the layer does for that class. So the
// recorder's op rows and the runtime's scheduler calls are decoded by the same code, and a
// call is classified the same way by both: adding an API is one list entry plus, only if it is
// a new class, that class's behaviour in each layer.
//
// Plain data, no allocation, no virtual calls: the wrappers are on the hot path, and with the
// class known at compile time the compiler keeps only the fields a layer reads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "syncopate/dispatch/cuda_headers.hpp"
#include "syncopate/trace/types.hpp"

namespace syncopate::preload {

// Every intercepted function as a small enum (the order of the lists), so that the hot path
// finds a name by index.
enum class ApiName : std::uint16_t {
#define SYNCOPATE_CUDART(ret, name, params, args, what, roles) name,
#define SYNCOPATE_CUDART_MANUAL SYNCOPATE_CUDART
#include "syncopate/dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
#define SYNCOPATE_DRIVER(ret, name, params, args, what, roles) name,
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_DRIVER
#include "syncopate/dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
#define SYNCOPATE_NCCL(ret, name, params, args, what, roles) name,
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
  Count
};

// Their names, by ApiName.
extern const char* const kApiNameText[static_cast<std::size_t>(ApiName::Count)];

// What a call does, as far as recording and ordering GPU work are concerned.
enum class CallClass : std::uint8_t {
  Launch,         // a kernel launch
  Copy,           // a memory copy (dst, src, bytes)
  Fill,           // a memset (dst, bytes)
  EventRecord,    // puts an event's marker on a stream
  StreamWait,     // a stream waits for an event
  StreamSync,     // the host waits for a stream
  EventSync,      // the host waits for an event
  DeviceSync,     // the host waits for the current device (cudaDeviceSynchronize)
  ContextSync,    // the host waits for the current context (cuCtxSynchronize)
  DeviceReset,    // the current device's context goes, with all it holds (cudaDeviceReset)
  StreamQuery,    // asks whether a stream is done, without blocking
  EventQuery,     // asks whether an event has completed, without blocking
  StreamCreate,
  StreamDestroy,
  Alloc,          // memory is allocated (device, pinned host, managed, stream-ordered)
  Free,           // memory is released
  SetDevice,      // the thread's current device changes
  ContextSwitch,  // the thread's current context changes (driver)
  CaptureBegin,   // graph capture starts on a stream
  CaptureEnd,
  GraphLaunch,    // an instantiated graph runs on a stream
  Lookup,         // a query that hands out handles or entry points (their exports are hand-written)
  Setup,          // prepares work or memory without touching data the program sees or ordering what
                  // it waits for: building graphs, memory pools and their settings, limits, advice,
                  // and the stream-ordered prefetches and attachments of managed memory (which move
                  // or map pages, never change their contents)
  CommCreate,     // NCCL communicators made from a unique id, or all at once in one process
  CommDerive,     // a communicator made from a parent (split, shrink)
  CommFinalize,   // a communicator's outstanding work is flushed; it stays usable for destroy
  CommDestroy,    // a communicator goes away (destroy, abort)
  Collective,     // an NCCL collective or send/receive
  GroupStart,
  GroupEnd,
};

// Where a memory range lives, as far as the API says.
enum class MemorySide : std::uint8_t {
  Unknown,  // a pointer of unified addressing: device or host
  Host,     // the API says host memory (cuMemcpyHtoD's source)
  Symbol,   // a device variable named by its host shadow: its device address is not known here
};

struct MemoryRange {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  MemorySide side = MemorySide::Unknown;
};

// How a communicator-creating call names its communicators.
struct CommCreation {
  ncclComm_t* out = nullptr;     // the new communicator (or the first of `count`)
  int count = 1;                 // ncclCommInitAll: one per device, in `out[0..count)`
  int nranks = 0;
  int rank = -1;                 // -1 when the call does not say (ncclCommInitAll: the index)
  const void* unique_ids = nullptr;  // the ncclUniqueId(s) every rank passes
  int unique_id_count = 0;
  ncclComm_t parent = nullptr;   // CommDerive: the parent
  std::uint64_t derive_salt = 0; // CommDerive: what tells the parent's children apart (the colour)
};

struct CallFacts {
  constexpr CallFacts(CallClass what_, ApiName api_, trace::ApiDomain domain_) noexcept
      : what(what_), api(api_), domain(domain_) {}

  CallClass what;
  ApiName api;
  trace::ApiDomain domain;

  // The stream the call names (null: the default stream), and where the wrapper keeps it, so
  // that a layer may issue the call on another stream (the runtime's join stream).
  cudaStream_t stream = nullptr;
  cudaStream_t* stream_slot = nullptr;
  bool has_stream = false;       // false: the call names no stream (cudaMemcpy, syncs, ...)
  bool per_thread = false;       // a _ptsz/_ptds entry point: stream 0 is the per-thread stream
  bool blocks_host = false;      // the call also waits on the host (cudaMemcpy, cudaMemset)
  bool device_wide = false;      // it is ordered against all work of the devices it involves
  bool passes_through = false;   // the arguments cannot be described (a null launch config)

  std::uint64_t event = 0;

  // Copies and fills: the ranges touched and the payload.
  MemoryRange dst;
  MemoryRange src;
  std::uint64_t bytes = 0;
  trace::MemcpyKind copy_kind = trace::MemcpyKind::Unknown;

  // Launches: one of the three ways a kernel is named, its shape and its argument array.
  const void* kernel_stub = nullptr;  // the host stub (cudaLaunchKernel & co)
  cudaKernel_t kernel_handle = nullptr;  // a cudaKernel_t (__cudaLaunchKernel)
  CUfunction kernel_function = nullptr;  // a driver function (cuLaunchKernel)
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  void** kernel_args = nullptr;
  void** kernel_extra = nullptr;  // the driver's other way: a packed buffer (cuLaunchKernel's `extra`)

  // Allocations, frees, streams and devices.
  void** allocated = nullptr;         // where the runtime stores the new pointer
  CUdeviceptr* allocated_driver = nullptr;
  std::uint64_t mapped = 0;           // a range mapped at an address the call is given (cuMemMap)
  std::uint64_t alloc_bytes = 0;
  std::size_t* alloc_pitch = nullptr;  // pitched allocations: alloc_bytes rows of *alloc_pitch bytes
  trace::AllocKind alloc_kind = trace::AllocKind::Device;
  bool on_device = false;             // the allocation belongs to the current device
  std::uint64_t freed = 0;
  cudaStream_t* created_stream = nullptr;
  unsigned stream_flags = 0;
  int stream_priority = 0;
  int device = -1;

  // NCCL.
  ncclComm_t comm = nullptr;
  trace::CollType coll_type = trace::CollType::Unknown;
  trace::DataType dtype = trace::DataType::Unknown;
  trace::RedOp red_op = trace::RedOp::None;
  std::int32_t root_or_peer = -1;
  std::uint64_t count = 0;  // elements, as the call gives them
  const void* send = nullptr;
  const void* recv = nullptr;
  CommCreation creation;

  // The stream the call means, as the runtime understands stream 0: the per-thread stream for
  // a per-thread entry point, else the legacy default stream.
  cudaStream_t meantStream() const noexcept {
    return per_thread && stream == nullptr ? cudaStreamPerThread : stream;
  }
};

inline std::uint64_t addressOf(const void* pointer) noexcept { return reinterpret_cast<std::uint64_t>(pointer); }

inline bool succeeded(cudaError_t result) noexcept { return result == cudaSuccess; }
inline bool succeeded(CUresult result) noexcept { return result == CUDA_SUCCESS; }

// What a successful Alloc-class call made: its address (0 when it names none) and size, read
// after the call, which writes them.
inline std::uint64_t allocatedAddress(const CallFacts& facts) noexcept {
  if (facts.allocated != nullptr) return addressOf(*facts.allocated);
  if (facts.allocated_driver != nullptr) return *facts.allocated_driver;
  return facts.mapped;
}
inline std::uint64_t allocatedBytes(const CallFacts& facts) noexcept {
  return facts.alloc_pitch != nullptr ? facts.alloc_bytes * *facts.alloc_pitch : facts.alloc_bytes;
}

trace::MemcpyKind memcpyKindOf(cudaMemcpyKind kind) noexcept;
trace::DataType dataTypeOf(ncclDataType_t type) noexcept;
trace::RedOp redOpOf(ncclRedOp_t op) noexcept;

}  // namespace syncopate::preload

#include "recorder/op_recording.hpp"

#include <cstring>

#include "recorder/record_call.hpp"

namespace syncopate::preload {

void writeArgumentRecords(const IssuedOp& op, std::uint32_t correlation, const LaunchTouch* touches, int touched,
                          Ring& ring, std::uint64_t first) noexcept {
  std::uint64_t at = first;
  if (op.pointer_count > 0) {
    trace::OpArgsRecord args;
    args.correlation_id = correlation;
    args.count = op.pointer_count;
    for (std::uint8_t i = 0; i < op.pointer_count; ++i) {
      args.index[i] = i;
      args.address[i] = op.pointers[i];
    }
    ring.reserved(at++) = args;
  }
  if (op.kind != trace::OpKind::Kernel) return;
  trace::OpArgsRecord args;
  args.correlation_id = correlation;
  if (touched < 0) {
    // One row with index 65535: what this launch touches is not known (docs/store-schema.md).
    args.count = 1;
    args.index[0] = trace::kUnknownLayoutArgIndex;
    args.address[0] = 0;
    ring.reserved(at) = args;
    return;
  }
  for (int i = 0; i < touched; ++i) {
    args.index[args.count] = touches[i].parameter;
    args.address[args.count] = touches[i].address;
    if (++args.count == 2) {
      ring.reserved(at++) = args;
      args.count = 0;
    }
  }
  if (args.count > 0) ring.reserved(at) = args;
}

namespace {

// The launch shape of `kernel` (interned on first sight).
trace::ShapeId internedShape(Recorder& recorder, const KernelInfo* kernel, const dim3& grid, const dim3& block) noexcept {
  trace::LaunchShape shape;
  shape.name_id = kernel != nullptr ? recorder.kernelName(*kernel) : recorder.internName("<unknown kernel>");
  shape.grid = {grid.x, grid.y, grid.z};
  shape.block = {block.x, block.y, block.z};
  return recorder.catalog().internShape(shape);
}

// What a launch names, as the registry looks it up (launchedKernel: the first that is not null).
const void* launchIdentity(const IssueFacts& facts) noexcept {
  if (facts.kernel_handle != nullptr) return facts.kernel_handle;
  if (facts.kernel_function != nullptr) return facts.kernel_function;
  return facts.kernel_stub;
}

// The cache's slot for a launch (direct-mapped by what it names and its grid's and block's x).
CachedShape& cacheSlot(ThreadState& thread, const void* launched, const dim3& grid, const dim3& block) noexcept {
  const std::uint64_t key =
      reinterpret_cast<std::uintptr_t>(launched) ^ (std::uint64_t{grid.x} << 40) ^ (std::uint64_t{block.x} << 52);
  static_assert(kShapeCacheEntries == 256, "the index is the hash's top 8 bits");
  return thread.shapes[(key * 0x9E3779B97F4A7C15ull) >> 56];
}

// A launch not in the cache (or not cacheable: a kernel the registry cannot name): looked up,
// interned, and cached under the count of registry changes read before the lookup, so that an
// entry made from a lookup that raced a registration is already out of date when it is stored.
[[gnu::noinline]] LaunchedShape lookUpLaunch(Recorder& recorder, CachedShape& slot, const void* launched,
                                             std::uint32_t registry_changes, const IssueFacts& launch) noexcept {
  const KernelInfo* kernel = launchedKernel(launch.kernel_handle, launch.kernel_function, launch.kernel_stub);
  const trace::ShapeId shape = internedShape(recorder, kernel, launch.grid, launch.block);
  if (kernel != nullptr && shape != trace::kNoShape) {
    slot.launched = launched;
    slot.registry_changes = registry_changes;
    std::memcpy(slot.grid, &launch.grid, sizeof slot.grid);
    std::memcpy(slot.block, &launch.block, sizeof slot.block);
    slot.kernel = kernel;
    slot.shape = shape;
  }
  return {kernel, shape};
}

}  // namespace

LaunchedShape launchedShape(Recorder& recorder, ThreadState& thread, const IssueFacts& launch) noexcept {
  // The registry's maps only ever grow or set a value again (a module loaded where an unloaded
  // one was), and every change is counted, so an entry read under the same count is what the
  // registry would say; kernel infos are never freed, and the thread's state belongs to one
  // recorder generation (whose catalog the shape ids are from).
  const void* launched = launchIdentity(launch);
  const std::uint32_t registry_changes = kernelRegistry().changes();
  CachedShape& slot = cacheSlot(thread, launched, launch.grid, launch.block);
  if (slot.launched == launched && launched != nullptr && slot.registry_changes == registry_changes &&
      std::memcmp(slot.grid, &launch.grid, sizeof slot.grid) == 0 &&
      std::memcmp(slot.block, &launch.block, sizeof slot.block) == 0) [[likely]] {
    return {slot.kernel, slot.shape};
  }
  return lookUpLaunch(recorder, slot, launched, registry_changes, launch);
}

IssuedOp issuedOp(Recorder& recorder, ThreadState& thread, const IssueFacts& facts) noexcept {
  IssuedOp op;
  switch (facts.what) {
    case CallClass::Launch: {
      const LaunchedShape launched = launchedShape(recorder, thread, facts);
      op.kind = trace::OpKind::Kernel;
      op.shape = launched.shape;
      op.kernel = launched.kernel;
      op.kernel_args = facts.kernel_args;
      op.kernel_extra = facts.kernel_extra;
      break;
    }
    case CallClass::Copy:
      op.kind = trace::OpKind::Memcpy;
      op.bytes = facts.bytes;
      op.memcpy_kind = facts.copy_kind;
      op.pointer_count = 2;
      op.pointers[0] = facts.dst;
      op.pointers[1] = facts.src;
      break;
    default:  // Fill
      op.kind = trace::OpKind::Memset;
      op.bytes = facts.bytes;
      op.pointer_count = 1;
      op.pointers[0] = facts.dst;
      break;
  }
  return op;
}

trace::Record hostSyncOp(Recorder& recorder, ThreadState& thread, const CallFacts& facts, std::uint32_t correlation,
                         std::int64_t start, std::int64_t end) noexcept {
  switch (facts.what) {
    case CallClass::StreamSync: {
      const trace::StreamId id = recorder.streamId(thread, recorder.currentDevice(thread), facts.meantStream());
      return trace::OpRecord::syncStream(id, correlation, start, end);
    }
    case CallClass::EventSync:
      return trace::OpRecord::syncEvent(recorder.catalog().eventId(facts.event), trace::kNoStream, correlation, start,
                                        end);
    default: {  // DeviceSync, ContextSync
      const auto device = static_cast<std::uint32_t>(recorder.currentDevice(thread));
      const trace::SyncKind kind = facts.what == CallClass::ContextSync ? trace::SyncKind::Context : trace::SyncKind::Device;
      return trace::OpRecord::syncDevice(kind, device, correlation, start, end);
    }
  }
}

void recordHostCall(Recorder& recorder, ThreadState& thread, trace::ApiDomain domain, ApiName api, std::int32_t result,
                    std::int64_t start, std::int64_t end) noexcept {
  trace::ApiCallRecord call_record;
  call_record.domain = domain;
  call_record.name_id = recorder.apiName(api);
  call_record.result = result;
  call_record.start_ns = start;
  call_record.end_ns = end;
  trace::Record record = call_record;
  recorder.push(thread, std::span<const trace::Record>(&record, 1));
}

}  // namespace syncopate::preload

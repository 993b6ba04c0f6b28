#include "recorder/op_recording.hpp"

#include "recorder/record_call.hpp"

namespace syncopate::preload {

int argumentRecordCount(const IssuedOp& op, LaunchTouch* touches, int& touched) noexcept {
  const int pointers = op.pointer_count > 0 ? 1 : 0;
  touched = 0;
  if (op.kind != trace::OpKind::Kernel) return pointers;
  touched = launchTouches(op.kernel, op.kernel_args, op.kernel_extra, touches);
  return pointers + (touched < 0 ? 1 : (touched + 1) / 2);
}

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

bool sameShape(const CachedShape& cached, const KernelInfo* kernel, const dim3& grid, const dim3& block) noexcept {
  return cached.kernel == kernel && cached.grid[0] == grid.x && cached.grid[1] == grid.y && cached.grid[2] == grid.z &&
         cached.block[0] == block.x && cached.block[1] == block.y && cached.block[2] == block.z;
}

}  // namespace

trace::ShapeId kernelShape(Recorder& recorder, ThreadState& thread, const KernelInfo* kernel, const dim3& grid,
                           const dim3& block) noexcept {
  if (kernel == nullptr) return internedShape(recorder, kernel, grid, block);
  // Kernel infos are never freed, and the thread's state belongs to one recorder generation
  // (whose catalog the ids are from), so an entry stays valid as long as the state.
  const std::uint64_t key = reinterpret_cast<std::uintptr_t>(kernel) ^ (std::uint64_t{grid.x} << 40) ^
                            (std::uint64_t{block.x} << 52);
  CachedShape& cached = thread.shapes[(key * 0x9E3779B97F4A7C15ull) >> 56];
  static_assert(kShapeCacheEntries == 256, "the index is the hash's top 8 bits");
  if (sameShape(cached, kernel, grid, block)) [[likely]] return cached.shape;
  const trace::ShapeId shape = internedShape(recorder, kernel, grid, block);
  if (shape != trace::kNoShape) cached = {kernel, {grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, shape};
  return shape;
}

IssuedOp issuedOp(Recorder& recorder, ThreadState& thread, const IssueFacts& facts) noexcept {
  IssuedOp op;
  switch (facts.what) {
    case CallClass::Launch: {
      const KernelInfo* kernel = launchedKernel(facts.kernel_handle, facts.kernel_function, facts.kernel_stub);
      op.kind = trace::OpKind::Kernel;
      op.shape = kernelShape(recorder, thread, kernel, facts.grid, facts.block);
      op.kernel = kernel;
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

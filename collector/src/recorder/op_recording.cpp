#include "recorder/op_recording.hpp"

#include "recorder/record_call.hpp"

namespace syncopate::preload {

trace::OpRecord pendingOp(const IssuedOp& op, trace::StreamId stream, std::uint32_t correlation, Ticket ticket) {
  trace::OpRecord record;
  switch (op.kind) {
    case trace::OpKind::Memcpy:
      record = trace::OpRecord::memcpy(op.memcpy_kind, stream, correlation, op.bytes, 0, 0);
      break;
    case trace::OpKind::Memset:
      record = trace::OpRecord::memset(stream, correlation, op.bytes, 0, 0);
      break;
    default:
      record = trace::OpRecord::launch(op.kind, stream, correlation, op.shape, 0, 0);
      break;
  }
  record.start_ns = 0;  // pending: the background thread fills in the GPU times
  record.end_ns = static_cast<std::int64_t>(ticket);
  return record;
}

int pointerArgumentRecords(const IssuedOp& op, std::uint32_t correlation, trace::Record* out) {
  int count = 0;
  if (op.pointer_count > 0) {
    trace::OpArgsRecord args;
    args.correlation_id = correlation;
    args.count = op.pointer_count;
    for (std::uint8_t i = 0; i < op.pointer_count; ++i) {
      args.index[i] = i;
      args.address[i] = op.pointers[i];
    }
    out[count++] = args;
  }
  if (op.kind != trace::OpKind::Kernel) return count;
  LaunchTouch touches[kMaxLaunchTouches];
  const int touched = launchTouches(op.kernel, op.kernel_args, op.kernel_extra, touches);
  trace::OpArgsRecord args;
  args.correlation_id = correlation;
  if (touched < 0) {
    // One row with index 65535: what this launch touches is not known (docs/store-schema.md).
    args.count = 1;
    args.index[0] = trace::kUnknownLayoutArgIndex;
    args.address[0] = 0;
    out[count++] = args;
    return count;
  }
  for (int i = 0; i < touched; ++i) {
    args.index[args.count] = touches[i].parameter;
    args.address[args.count] = touches[i].address;
    if (++args.count == 2) {
      out[count++] = args;
      args.count = 0;
    }
  }
  if (args.count > 0) out[count++] = args;
  return count;
}

trace::ShapeId kernelShape(Recorder& recorder, const KernelInfo* kernel, dim3 grid, dim3 block) noexcept {
  trace::LaunchShape shape;
  shape.name_id = kernel != nullptr ? recorder.kernelName(*kernel) : recorder.internName("<unknown kernel>");
  shape.grid = {grid.x, grid.y, grid.z};
  shape.block = {block.x, block.y, block.z};
  return recorder.catalog().internShape(shape);
}

IssuedOp issuedOp(Recorder& recorder, const CallFacts& facts) noexcept {
  IssuedOp op;
  switch (facts.what) {
    case CallClass::Launch: {
      const KernelInfo* kernel = launchedKernel(facts);
      op.kind = trace::OpKind::Kernel;
      op.shape = kernelShape(recorder, kernel, facts.grid, facts.block);
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
      op.pointers[0] = facts.dst.address;
      op.pointers[1] = facts.src.address;
      break;
    default:  // Fill
      op.kind = trace::OpKind::Memset;
      op.bytes = facts.bytes;
      op.pointer_count = 1;
      op.pointers[0] = facts.dst.address;
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

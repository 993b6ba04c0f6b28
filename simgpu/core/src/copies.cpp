#include <simgpu/core/copies.hpp>
#include <simgpu/core/memory.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/streams.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace simgpu {
namespace {

TimeNs transferNs(TimeNs latency, double bandwidth, std::size_t bytes) {
  return latency + static_cast<TimeNs>(std::llround(static_cast<double>(bytes) / bandwidth * 1e9));
}

// Managed memory counts as its device's: where a program that uses it on the GPU keeps it.
bool onDevice(const PointerInfo& p) { return p.kind == MemoryKind::Device || p.kind == MemoryKind::Managed; }

std::string_view copyName(CopyDirection d) {
  switch (d) {
    case CopyDirection::HostToDevice: return "memcpy HtoD";
    case CopyDirection::DeviceToHost: return "memcpy DtoH";
    case CopyDirection::DeviceToDevice: return "memcpy DtoD";
    case CopyDirection::HostToHost: return "memcpy HtoH";
    case CopyDirection::Peer: return "memcpy PtoP";
    case CopyDirection::None: break;
  }
  return "memcpy";
}

// A memset as an op: rows of elements of 1, 2 or 4 bytes, each the low bytes of `value`.
StreamOp fillOp(void* dst, unsigned value, unsigned element_size, const CopyShape& shape) {
  StreamOp op;
  op.work_class = WorkClass::Compute;  // a memset is a kernel on the device
  op.kind = OpKind::Memset;
  op.bytes = shape.bytes();
  op.name = "memset";
  const TimeNs duration = memsetDuration(shape.bytes());
  op.duration_ns = duration;
  op.body = [dst, value, element_size, shape, duration](const OpContext&) {
    auto* d = static_cast<std::byte*>(dst);
    for (std::size_t row = 0; row < shape.height; ++row) {
      std::byte* begin = d + row * shape.dst_pitch;
      if (element_size == 1) {
        std::memset(begin, static_cast<int>(value), shape.width);
        continue;
      }
      for (std::size_t at = 0; at + element_size <= shape.width; at += element_size)
        std::memcpy(begin + at, &value, element_size);  // little-endian: the low bytes
    }
    OpTiming t;
    t.duration_ns = duration;
    return t;
  };
  return op;
}

cudaError_t fill(void* dst, unsigned value, unsigned element_size, const CopyShape& shape, cudaStream_t stream,
                 bool wait) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  if (shape.bytes() == 0) return cudaSuccess;
  if (dst == nullptr) return cudaErrorInvalidValue;
  if (shape.height > 1 && shape.dst_pitch < shape.width) return cudaErrorInvalidPitchValue;
  StreamOp op = fillOp(dst, value, element_size, shape);
  return wait ? enqueueAndWait(stream, std::move(op)) : enqueue(stream, std::move(op));
}

}  // namespace

cudaError_t copyDirection(const void* dst, const void* src, cudaMemcpyKind kind, CopyDirection* out) {
  switch (kind) {
    case cudaMemcpyHostToHost: *out = CopyDirection::HostToHost; return cudaSuccess;
    case cudaMemcpyHostToDevice: *out = CopyDirection::HostToDevice; return cudaSuccess;
    case cudaMemcpyDeviceToHost: *out = CopyDirection::DeviceToHost; return cudaSuccess;
    case cudaMemcpyDeviceToDevice:
    case cudaMemcpyDefault: {
      const PointerInfo d = lookupPointer(dst);
      const PointerInfo s = lookupPointer(src);
      if (onDevice(d) && onDevice(s))
        *out = d.device == s.device ? CopyDirection::DeviceToDevice : CopyDirection::Peer;
      else if (kind == cudaMemcpyDeviceToDevice)
        *out = CopyDirection::DeviceToDevice;  // as the program says; host memory stands in
      else if (onDevice(d))
        *out = CopyDirection::HostToDevice;
      else if (onDevice(s))
        *out = CopyDirection::DeviceToHost;
      else
        *out = CopyDirection::HostToHost;
      return cudaSuccess;
    }
  }
  return cudaErrorInvalidMemcpyDirection;
}

TimeNs copyDuration(CopyDirection direction, std::size_t bytes) {
  const Profile& p = profile();
  switch (direction) {
    case CopyDirection::HostToDevice: return transferNs(p.copy.latency_ns, p.copy.h2d_bandwidth, bytes);
    case CopyDirection::DeviceToHost: return transferNs(p.copy.latency_ns, p.copy.d2h_bandwidth, bytes);
    case CopyDirection::DeviceToDevice: return transferNs(p.copy.latency_ns, p.copy.d2d_bandwidth, bytes);
    // A host-to-host copy goes through the same engines as a device-to-host one.
    case CopyDirection::HostToHost: return transferNs(p.copy.latency_ns, p.copy.d2h_bandwidth, bytes);
    case CopyDirection::Peer:
      return transferNs(p.links.intra_process.latency_ns, p.links.intra_process.bandwidth, bytes);
    case CopyDirection::None: break;
  }
  return 0;
}

TimeNs memsetDuration(std::size_t bytes) {
  const Profile& p = profile();
  return std::max(p.device.min_kernel_ns, transferNs(0, p.device.memory_bandwidth, bytes));
}

cudaError_t enqueueCopy(void* dst, const void* src, const CopyShape& shape, CopyDirection direction,
                        cudaStream_t stream, bool wait) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  if (shape.bytes() == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return cudaErrorInvalidValue;
  if (shape.height > 1 && (shape.dst_pitch < shape.width || shape.src_pitch < shape.width))
    return cudaErrorInvalidPitchValue;
  StreamOp op;
  op.work_class = WorkClass::Copy;
  op.kind = OpKind::Memcpy;
  op.direction = direction;
  op.bytes = shape.bytes();
  op.name = copyName(direction);
  const TimeNs duration = copyDuration(direction, shape.bytes());
  op.duration_ns = duration;
  op.body = [dst, src, shape, duration](const OpContext&) {
    auto* d = static_cast<std::byte*>(dst);
    const auto* s = static_cast<const std::byte*>(src);
    if (shape.height == 1) {
      std::memmove(d, s, shape.width);
    } else {
      for (std::size_t row = 0; row < shape.height; ++row)
        std::memmove(d + row * shape.dst_pitch, s + row * shape.src_pitch, shape.width);
    }
    OpTiming t;
    t.duration_ns = duration;
    return t;
  };
  return wait ? enqueueAndWait(stream, std::move(op)) : enqueue(stream, std::move(op));
}

cudaError_t enqueueMemset(void* dst, int value, const CopyShape& shape, cudaStream_t stream,
                          bool wait) {
  return fill(dst, static_cast<unsigned char>(value), 1, shape, stream, wait);
}

cudaError_t enqueueFill(void* dst, unsigned value, unsigned element_size, const CopyShape& shape,
                        cudaStream_t stream) {
  return fill(dst, value, element_size, shape, stream, false);
}

cudaError_t enqueuePrefetch(std::size_t bytes, CopyDirection direction, cudaStream_t stream) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  StreamOp op;
  op.work_class = WorkClass::Copy;
  op.kind = OpKind::Prefetch;
  op.direction = direction;
  op.bytes = bytes;
  op.name = "prefetch";
  const TimeNs duration = copyDuration(direction, bytes);
  op.duration_ns = duration;
  op.body = [duration](const OpContext&) {
    OpTiming t;
    t.duration_ns = duration;
    return t;
  };
  return enqueue(stream, std::move(op));
}

}  // namespace simgpu

// Reference results for simgpu's NCCL tests: deterministic per-rank inputs and what every
// rank must hold after each collective, computed locally from all ranks' inputs.
#pragma once

#include "simgpu/nccl/collective_task.hpp"
#include "simgpu/nccl/datatype.hpp"
#include "simgpu/nccl/reduction.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace simgpu::nccl::testing {

// A deterministic, type-appropriate input: small values so that sums and products of a few
// ranks stay meaningful in every type (including fp8).
inline void fillInput(ncclDataType_t type, int rank, std::size_t n, void* out, std::uint32_t salt = 0) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t h = static_cast<std::uint32_t>(i * 2654435761u) ^ (static_cast<std::uint32_t>(rank + 1) * 40503u) ^ salt;
    const int small = static_cast<int>(h % 7) - 3;            // -3..3
    const float frac = static_cast<float>(h % 16) / 8.0f - 1.0f;  // -1..0.875 in steps of 1/8
    char* p = static_cast<char*>(out) + i * datatypeSize(type);
    switch (type) {
      case ncclInt8: { std::int8_t v = static_cast<std::int8_t>(small); std::memcpy(p, &v, 1); break; }
      case ncclUint8: { std::uint8_t v = static_cast<std::uint8_t>(h % 5 + 1); std::memcpy(p, &v, 1); break; }
      case ncclInt32: { std::int32_t v = small * 1000 + rank; std::memcpy(p, &v, 4); break; }
      case ncclUint32: { std::uint32_t v = h % 1000 + 1; std::memcpy(p, &v, 4); break; }
      case ncclInt64: { std::int64_t v = static_cast<std::int64_t>(small) * 100000 - rank; std::memcpy(p, &v, 8); break; }
      case ncclUint64: { std::uint64_t v = h % 100000 + 1; std::memcpy(p, &v, 8); break; }
      case ncclFloat16: { std::uint16_t v = floatToHalf(frac + static_cast<float>(small)); std::memcpy(p, &v, 2); break; }
      case ncclFloat32: { float v = frac * 3.7f + static_cast<float>(small); std::memcpy(p, &v, 4); break; }
      case ncclFloat64: { double v = frac * 1.3 + small * 0.1; std::memcpy(p, &v, 8); break; }
      case ncclBfloat16: { std::uint16_t v = floatToBfloat16(frac * 2.0f + static_cast<float>(small)); std::memcpy(p, &v, 2); break; }
      case ncclFloat8e4m3: { std::uint8_t v = floatToFp8e4m3(frac + static_cast<float>(small) / 2.0f); std::memcpy(p, &v, 1); break; }
      case ncclFloat8e5m2: { std::uint8_t v = floatToFp8e5m2(frac * 4.0f); std::memcpy(p, &v, 1); break; }
      default: break;
    }
  }
}

inline std::vector<char> inputOf(ncclDataType_t type, int rank, std::size_t n, std::uint32_t salt = 0) {
  std::vector<char> v(n * datatypeSize(type));
  fillInput(type, rank, n, v.data(), salt);
  return v;
}

inline constexpr ncclDataType_t kAllTypes[] = {ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64, ncclUint64,
                                                ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16,
                                                ncclFloat8e4m3, ncclFloat8e5m2};
inline constexpr RedOp kAllOps[] = {RedOp::Sum, RedOp::Prod, RedOp::Max, RedOp::Min, RedOp::Avg};

inline bool isRooted(CollKind kind) {
  return kind == CollKind::Broadcast || kind == CollKind::Reduce || kind == CollKind::Gather || kind == CollKind::Scatter;
}

// What rank `rank` must hold after the collective, from every rank's input.
inline std::vector<char> expected(const CollectiveArgs& a, int nranks, int rank, const std::vector<std::vector<char>>& inputs) {
  const std::size_t es = datatypeSize(a.datatype);
  const std::size_t n = a.count;
  std::vector<const void*> ptrs;
  for (const auto& in : inputs) ptrs.push_back(in.data());
  std::vector<char> out;
  switch (a.kind) {
    case CollKind::AllReduce:
    case CollKind::Reduce:
      out.resize(n * es);
      reduceInRankOrder(a.datatype, a.op, ptrs.data(), nranks, out.data(), n);
      break;
    case CollKind::ReduceScatter:
      out.resize(n * es);
      for (auto& p : ptrs) p = static_cast<const char*>(p) + static_cast<std::size_t>(rank) * n * es;
      reduceInRankOrder(a.datatype, a.op, ptrs.data(), nranks, out.data(), n);
      break;
    case CollKind::Broadcast:
      out = inputs[static_cast<std::size_t>(a.root)];
      break;
    case CollKind::AllGather:
    case CollKind::Gather:
      for (const auto& in : inputs) out.insert(out.end(), in.begin(), in.end());
      break;
    case CollKind::AlltoAll:
      for (const auto& in : inputs) {
        const auto* seg = in.data() + static_cast<std::size_t>(rank) * n * es;
        out.insert(out.end(), seg, seg + n * es);
      }
      break;
    case CollKind::Scatter: {
      const auto* seg = inputs[static_cast<std::size_t>(a.root)].data() + static_cast<std::size_t>(rank) * n * es;
      out.assign(seg, seg + n * es);
      break;
    }
  }
  return out;
}

inline std::size_t sendElements(CollKind kind, std::size_t count, int nranks) {
  const bool per_peer = kind == CollKind::ReduceScatter || kind == CollKind::AlltoAll || kind == CollKind::Scatter;
  return per_peer ? count * static_cast<std::size_t>(nranks) : count;
}

inline std::size_t recvElements(CollKind kind, std::size_t count, int nranks) {
  const bool gathers = kind == CollKind::AllGather || kind == CollKind::Gather || kind == CollKind::AlltoAll;
  return gathers ? count * static_cast<std::size_t>(nranks) : count;
}

// Whether rank `rank` has a defined output after `a` (Reduce and Gather fill the root only).
inline bool holdsResult(const CollectiveArgs& a, int rank) {
  return !((a.kind == CollKind::Reduce || a.kind == CollKind::Gather) && rank != a.root);
}

// Every collective with every type (and every operator for the reducing ones), roots spread
// over the ranks.
inline std::vector<CollectiveArgs> everyCall(std::size_t count, int nranks) {
  std::vector<CollectiveArgs> calls;
  for (ncclDataType_t type : kAllTypes) {
    for (CollKind kind : {CollKind::AllReduce, CollKind::Reduce, CollKind::ReduceScatter}) {
      for (RedOp op : kAllOps) {
        CollectiveArgs a;
        a.kind = kind;
        a.datatype = type;
        a.op = op;
        a.count = count;
        a.root = static_cast<int>(calls.size()) % nranks;
        calls.push_back(a);
      }
    }
    for (CollKind kind : {CollKind::Broadcast, CollKind::AllGather, CollKind::AlltoAll, CollKind::Gather, CollKind::Scatter}) {
      CollectiveArgs a;
      a.kind = kind;
      a.datatype = type;
      a.count = count;
      a.root = isRooted(kind) ? static_cast<int>(calls.size()) % nranks : -1;
      calls.push_back(a);
    }
  }
  return calls;
}

}  // namespace simgpu::nccl::testing

#include "simgpu/nccl/reduction.hpp"

#include "simgpu/nccl/datatype.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace simgpu::nccl {
namespace {

// How one storage type is read into its accumulation type and written back.
template <typename T>
struct IntTraits {
  using Storage = T;
  using Acc = T;
  using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
  static Acc load(Storage v) { return v; }
  static Storage store(Acc v) { return v; }
  // Wrap-around arithmetic without signed overflow: compute in the unsigned type.
  static Acc add(Acc a, Acc b) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  }
  static Acc mul(Acc a, Acc b) {
    using U = std::make_unsigned_t<T>;
    using P = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;  // no int promotion
    return static_cast<T>(static_cast<U>(static_cast<P>(a) * static_cast<P>(b)));
  }
  static Acc max(Acc a, Acc b) { return std::max(a, b); }
  static Acc min(Acc a, Acc b) { return std::min(a, b); }
  static Acc divide(Acc a, int n) { return static_cast<T>(static_cast<Wide>(a) / static_cast<Wide>(n)); }
};

template <typename T, typename A>
struct FloatArith {
  using Acc = A;
  static Acc add(Acc a, Acc b) { return a + b; }
  static Acc mul(Acc a, Acc b) { return a * b; }
  static Acc max(Acc a, Acc b) { return std::fmax(a, b); }
  static Acc min(Acc a, Acc b) { return std::fmin(a, b); }
  static Acc divide(Acc a, int n) { return a / static_cast<Acc>(n); }
};

struct Float32Traits : FloatArith<float, float> {
  using Storage = float;
  static Acc load(Storage v) { return v; }
  static Storage store(Acc v) { return v; }
};

struct Float64Traits : FloatArith<double, double> {
  using Storage = double;
  static Acc load(Storage v) { return v; }
  static Storage store(Acc v) { return v; }
};

template <typename S, float (*ToFloat)(S), S (*FromFloat)(float)>
struct NarrowFloatTraits : FloatArith<S, float> {
  using Storage = S;
  static float load(Storage v) { return ToFloat(v); }
  static Storage store(float v) { return FromFloat(v); }
};

using HalfTraits = NarrowFloatTraits<std::uint16_t, halfToFloat, floatToHalf>;
using Bfloat16Traits = NarrowFloatTraits<std::uint16_t, bfloat16ToFloat, floatToBfloat16>;
using Fp8e4m3Traits = NarrowFloatTraits<std::uint8_t, fp8e4m3ToFloat, floatToFp8e4m3>;
using Fp8e5m2Traits = NarrowFloatTraits<std::uint8_t, fp8e5m2ToFloat, floatToFp8e5m2>;

// Buffers may be unaligned (a user pointer plus any element offset): go through memcpy,
// which compilers turn into plain loads and stores.
template <typename T>
T loadAt(const void* base, std::size_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(base) + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void storeAt(void* base, std::size_t i, T v) {
  std::memcpy(static_cast<char*>(base) + i * sizeof(T), &v, sizeof(T));
}

constexpr std::size_t kBlock = 512;  // accumulators kept on the stack per pass over the ranks

template <typename Traits, typename Combine>
void accumulate(typename Traits::Acc* acc, const void* in, std::size_t m, Combine combine) {
  using S = typename Traits::Storage;
  for (std::size_t i = 0; i < m; ++i) acc[i] = combine(acc[i], Traits::load(loadAt<S>(in, i)));
}

template <typename Traits>
void reduceTyped(RedOp op, const void* const* inputs, int n, void* out, std::size_t count) {
  using S = typename Traits::Storage;
  using A = typename Traits::Acc;
  A acc[kBlock];
  for (std::size_t base = 0; base < count; base += kBlock) {
    const std::size_t m = std::min(kBlock, count - base);
    const std::size_t offset = base * sizeof(S);
    auto at = [offset](const void* p) { return static_cast<const char*>(p) + offset; };
    for (std::size_t i = 0; i < m; ++i) acc[i] = Traits::load(loadAt<S>(at(inputs[0]), i));
    for (int r = 1; r < n; ++r) {
      const void* in = at(inputs[r]);
      switch (op) {
        case RedOp::Sum:
        case RedOp::Avg: accumulate<Traits>(acc, in, m, [](A a, A b) { return Traits::add(a, b); }); break;
        case RedOp::Prod: accumulate<Traits>(acc, in, m, [](A a, A b) { return Traits::mul(a, b); }); break;
        case RedOp::Max: accumulate<Traits>(acc, in, m, [](A a, A b) { return Traits::max(a, b); }); break;
        case RedOp::Min: accumulate<Traits>(acc, in, m, [](A a, A b) { return Traits::min(a, b); }); break;
      }
    }
    if (op == RedOp::Avg) {
      for (std::size_t i = 0; i < m; ++i) acc[i] = Traits::divide(acc[i], n);
    }
    char* o = static_cast<char*>(out) + offset;
    for (std::size_t i = 0; i < m; ++i) storeAt<S>(o, i, Traits::store(acc[i]));
  }
}

template <typename Traits>
void preMultiplyTyped(const void* src, void* dst, std::size_t count, const void* scalar) {
  using S = typename Traits::Storage;
  const auto factor = Traits::load(loadAt<S>(scalar, 0));
  for (std::size_t i = 0; i < count; ++i) {
    storeAt<S>(dst, i, Traits::store(Traits::mul(Traits::load(loadAt<S>(src, i)), factor)));
  }
}

// Calls f.template operator()<Traits>() for the traits of `datatype`.
template <typename F>
void withTraits(ncclDataType_t datatype, F&& f) {
  switch (datatype) {
    case ncclInt8: f.template operator()<IntTraits<std::int8_t>>(); break;
    case ncclUint8: f.template operator()<IntTraits<std::uint8_t>>(); break;
    case ncclInt32: f.template operator()<IntTraits<std::int32_t>>(); break;
    case ncclUint32: f.template operator()<IntTraits<std::uint32_t>>(); break;
    case ncclInt64: f.template operator()<IntTraits<std::int64_t>>(); break;
    case ncclUint64: f.template operator()<IntTraits<std::uint64_t>>(); break;
    case ncclFloat16: f.template operator()<HalfTraits>(); break;
    case ncclFloat32: f.template operator()<Float32Traits>(); break;
    case ncclFloat64: f.template operator()<Float64Traits>(); break;
    case ncclBfloat16: f.template operator()<Bfloat16Traits>(); break;
    case ncclFloat8e4m3: f.template operator()<Fp8e4m3Traits>(); break;
    case ncclFloat8e5m2: f.template operator()<Fp8e5m2Traits>(); break;
    default: break;  // callers validate the type first
  }
}

}  // namespace

const char* redOpName(RedOp op) {
  switch (op) {
    case RedOp::Sum: return "sum";
    case RedOp::Prod: return "prod";
    case RedOp::Max: return "max";
    case RedOp::Min: return "min";
    case RedOp::Avg: return "avg";
  }
  return "invalid";
}

void reduceInRankOrder(ncclDataType_t datatype, RedOp op, const void* const* inputs, int ninputs,
                       void* out, std::size_t count) {
  withTraits(datatype, [&]<typename Traits>() { reduceTyped<Traits>(op, inputs, ninputs, out, count); });
}

void preMultiply(ncclDataType_t datatype, const void* src, void* dst, std::size_t count,
                 const void* scalar) {
  withTraits(datatype, [&]<typename Traits>() { preMultiplyTyped<Traits>(src, dst, count, scalar); });
}

}  // namespace simgpu::nccl

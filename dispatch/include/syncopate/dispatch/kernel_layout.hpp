// A kernel's parameter layout, learnt once, at its first launch, the way it must be on a real
// GPU: where each parameter lies in the parameter buffer and how large it is from the driver
// (cudaFuncGetParamInfo for runtime kernels, cuFuncGetParamInfo for driver functions; CUDA
// 12.4 and later), and what each parameter is from the kernel's mangled name
// (param_types.hpp). Where the runtime or driver has no such query (an older one), the offsets
// follow from the name when every parameter is a pointer or a number (the ABI's natural
// alignment), and the process says once that the query is missing.
#pragma once

#include <cstdint>

#include "syncopate/dispatch/kernel_registry.hpp"
#include "syncopate/dispatch/param_types.hpp"

namespace syncopate::preload {

struct ParamSlot {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
  ParamKind kind = ParamKind::Scanned;
};

struct ParamLayout {
  // False when no size is known (an extern "C" kernel, or one taking a struct by value, without
  // the query): then nothing says where the parameters lie.
  bool readable = false;
  std::uint32_t count = 0;
  std::uint32_t buffer_bytes = 0;  // the end of the last parameter
  bool scans = false;              // some parameter is Scanned
  const ParamSlot* slots = nullptr;  // `count` of them
  // The indices of the Pointer parameters, in order: all a launch of a kernel that scans
  // nothing (pointers and numbers only) reads.
  std::uint32_t pointer_count = 0;
  const std::uint16_t* pointers = nullptr;
};

// The kernel's layout, resolved on first use and then cached (never freed); null while it
// cannot be asked (the calling thread has a CUDA error pending, which asking would disturb):
// that launch is then treated as touching anything. Once known, a launch reads it inline: one
// load, no call.
const ParamLayout* learnParamLayout(const KernelInfo& kernel) noexcept;
inline const ParamLayout* paramLayoutOf(const KernelInfo& kernel) noexcept {
  if (const ParamLayout* known = kernel.layout.load(std::memory_order_acquire)) [[likely]] return known;
  return learnParamLayout(kernel);
}

}  // namespace syncopate::preload

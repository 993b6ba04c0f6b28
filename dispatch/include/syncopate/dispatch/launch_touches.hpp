// What a kernel launch may touch, from its arguments and its kernel's parameter layout
// (kernel_layout.hpp): the value of every pointer parameter, and every 8-byte-aligned word of
// the other parameters (by-value structs and arrays, parameters of kernels whose name says
// nothing) that falls inside device memory the process holds (device_memory.hpp). The recorder
// stores them as the launch's op_args, the tuner's runtime orders the launch by them.
//
// Hot path: no lock, no allocation, no system call; a kernel whose parameters are all pointers
// and numbers never reads the memory map.
#pragma once

#include <cstdint>
#include <cstring>

#include "syncopate/dispatch/kernel_layout.hpp"

namespace syncopate::preload {

// The most touches one launch reports: a 4 KB by-value struct of pointers (a multi-tensor-apply
// optimizer's tensor lists) fits. A launch with more is treated as touching anything.
inline constexpr int kMaxLaunchTouches = 512;

struct LaunchTouch {
  std::uint64_t address;
  // The parameter it came from; for a word of a driver launch's packed buffer whose layout is
  // unknown, trace::kPackedWordArgIndex plus the word's index in the buffer.
  std::uint16_t parameter;
};

// Writes the touches of a launch of a kernel with `layout` to `out` (room for
// kMaxLaunchTouches) and returns how many, or -1 when the launch may touch anything: its
// parameter buffer cannot be read (no size known), or it refers to more than kMaxLaunchTouches
// addresses. `args` is the launch's array of one pointer per parameter, `extra` the driver's
// alternative (CU_LAUNCH_PARAM_BUFFER_POINTER and _SIZE); either may be null.
int touchesOf(const ParamLayout& layout, void* const* args, void* const* extra, LaunchTouch* out) noexcept;

// Whether a launch's touches are its Pointer parameters' values and nothing else: it passes an
// argument array, and its kernel's layout is readable and scans nothing (pointers and numbers
// only). What most launches are; touchesOf and launchTouches both take pointerArgumentTouches then.
inline bool touchesArePointerArguments(const ParamLayout& layout, void* const* args) noexcept {
  return layout.readable && !layout.scans && args != nullptr;
}

// touchesOf for a launch where touchesArePointerArguments: the value of each Pointer parameter.
// Inline, because it is what most launches take.
inline int pointerArgumentTouches(const ParamLayout& layout, void* const* args, LaunchTouch* out) noexcept {
  int touched = 0;
  for (std::uint32_t k = 0; k < layout.pointer_count; ++k) {
    const std::uint16_t i = layout.pointers[k];
    if (args[i] == nullptr) return -1;
    std::uint64_t address;
    std::memcpy(&address, args[i], sizeof address);  // host copies of arguments need not be aligned
    if (address == 0) continue;
    if (touched == kMaxLaunchTouches) return -1;
    out[touched++] = {address, i};
  }
  return touched;
}

// The same for a launch of `kernel`, with its layout learnt (or not yet learnable: -1) on its
// first launch; -1 for a kernel the registry does not know.
inline int launchTouches(const KernelInfo* kernel, void* const* args, void* const* extra, LaunchTouch* out) noexcept {
  const ParamLayout* layout = kernel != nullptr ? paramLayoutOf(*kernel) : nullptr;
  if (layout == nullptr) return -1;
  if (touchesArePointerArguments(*layout, args)) [[likely]] return pointerArgumentTouches(*layout, args, out);
  return touchesOf(*layout, args, extra, out);
}

}  // namespace syncopate::preload

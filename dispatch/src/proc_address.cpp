#include "syncopate/dispatch/proc_address.hpp"

#include <atomic>
#include <cstring>
#include <string_view>

#include "syncopate/dispatch/log.hpp"
#include "syncopate/dispatch/chain.hpp"

// The interposers themselves (driver_exports.cpp), by their exported names.
extern "C" {
#define SYNCOPATE_DRIVER(ret, name, params, args, what, roles) ret name params;
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_DRIVER
#include "syncopate/dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
}

namespace syncopate::preload {
namespace {

std::atomic<std::uint64_t> untraced{0};

// The name cuGetProcAddress is asked for: the exported name without its ABI suffixes
// (cuMemcpyHtoDAsync_v2_ptsz -> cuMemcpyHtoDAsync).
constexpr std::string_view baseName(std::string_view name) {
  for (std::string_view suffix : {std::string_view("_ptsz"), std::string_view("_ptds")}) {
    if (name.ends_with(suffix)) name.remove_suffix(suffix.size());
  }
  if (name.ends_with("_v2")) name.remove_suffix(3);
  return name;
}

struct Candidate {
  std::string_view exported;
  std::string_view base;
  void* interposer;
  std::size_t offset;  // of the real function's entry in DriverTable
};

#define SYNCOPATE_DRIVER(ret, name, params, args, what, roles) \
  Candidate{#name, baseName(#name), reinterpret_cast<void*>(&::name), offsetof(DriverTable, name)},
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_DRIVER
const Candidate kCandidates[] = {
#include "syncopate/dispatch/driver_api.inc"
};
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER

void* entryAt(const DriverTable& table, std::size_t offset) {
  void* entry;
  std::memcpy(&entry, reinterpret_cast<const char*>(&table) + offset, sizeof entry);
  return entry;
}

}  // namespace

void handOutDriverInterposer(const char* symbol, void** function) noexcept {
  if (symbol == nullptr || function == nullptr || *function == nullptr) return;
  std::string_view requested(symbol);
  bool interposed = false;
  const DriverTable* real = realDriver();
  for (const Candidate& candidate : kCandidates) {
    if (candidate.base != requested) continue;
    interposed = true;
    if (*function == candidate.interposer) return;  // already ours (a lookup that went through the global scope)
    if (real != nullptr && entryAt(*real, candidate.offset) == *function) {
      *function = candidate.interposer;
      return;
    }
  }
  if (interposed) {
    untraced.fetch_add(1, std::memory_order_relaxed);
    log(LogLevel::Debug, "driver entry point %s handed out untraced (another ABI version or another tool's wrapper)",
        symbol);
  }
}

void* driverInterposerNamed(const char* exported_name) noexcept {
  const std::string_view name(exported_name);
  for (const Candidate& candidate : kCandidates) {
    if (candidate.exported == name) return candidate.interposer;
  }
  return nullptr;
}

std::uint64_t untracedDriverEntryPoints() noexcept { return untraced.load(std::memory_order_relaxed); }

}  // namespace syncopate::preload

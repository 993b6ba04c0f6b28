// Building each family's chain: find the real library, resolve every listed function in it,
// then let the active layers wrap it, bottom first. Until the real library is loaded the family
// answers with a table whose every entry fails (the call is not lost silently: it returns the
// family's "symbol not found" error and says so once), and the next call tries again; a
// program that never loads CUDA therefore never builds anything.
#include "syncopate/dispatch/chain.hpp"

#include <dlfcn.h>

#include <mutex>

#include "syncopate/dispatch/log.hpp"
#include "syncopate/dispatch/layer.hpp"
#include "syncopate/dispatch/nccl_threads.hpp"

namespace syncopate::preload::detail {

std::atomic<const CudartTable*> cudartTop{nullptr};
std::atomic<const DriverTable*> driverTop{nullptr};
std::atomic<const NcclTable*> ncclTop{nullptr};

namespace {

// Where a family's real functions live. RTLD_NEXT finds them when the library is in the global
// scope; a library loaded as a dependency of an RTLD_LOCAL module (a Python extension, say)
// is only reachable through its own handle, found by soname without loading anything.
struct RealLibrary {
  const char* const* sonames = nullptr;
  const char* probe = nullptr;  // a function every version of the library has
  void* handle = nullptr;

  bool find() noexcept {
    for (const char* const* soname = sonames; *soname != nullptr; ++soname) {
      if ((handle = dlopen(*soname, RTLD_LAZY | RTLD_NOLOAD)) != nullptr) return true;
    }
    return dlsym(RTLD_NEXT, probe) != nullptr;
  }

  void* resolve(const char* name) const noexcept {
    void* function = dlsym(RTLD_NEXT, name);
    if (function == nullptr && handle != nullptr) function = dlsym(handle, name);
    return function;
  }
};

constexpr const char* kCudartSonames[] = {"libcudart.so.13", "libcudart.so.12", nullptr};
constexpr const char* kDriverSonames[] = {"libcuda.so.1", nullptr};
constexpr const char* kNcclSonames[] = {"libnccl.so.2", nullptr};

template <class Table, class Helpers>
struct Chain {
  std::mutex mutex;
  RealLibrary library;
  Table real;
  Helpers helpers;
  Table layered[LayerList::kMax];
};



constinit Chain<CudartTable, CudartHelpers> cudartChain{{}, {kCudartSonames, "cudaGetDeviceCount"}, {}, {}, {}};
constinit Chain<DriverTable, DriverHelpers> driverChain{{}, {kDriverSonames, "cuInit"}, {}, {}, {}};
constinit Chain<NcclTable, NcclHelpers> ncclChain{{}, {kNcclSonames, "ncclGetVersion"}, {}, {}, {}};

// A function the real library does not have: fail the call with the family's own error and
// say so once per function.
#define SYNCOPATE_MISSING(ret, name, error)                                                   \
  [](auto...) -> ret {                                                                        \
    static std::atomic<bool> said{false};                                                     \
    if (!said.exchange(true)) {                                                               \
      log(LogLevel::Warn, "%s is not available in the loaded library; the call fails", #name); \
    }                                                                                         \
    return error;                                                                             \
  }

void fillMissing(CudartTable& table) noexcept {
#define SYNCOPATE_CUDART(ret, name, params, args, what, roles) \
  table.name = SYNCOPATE_MISSING(ret, name, cudaErrorSharedObjectSymbolNotFound);
#define SYNCOPATE_CUDART_MANUAL SYNCOPATE_CUDART
#include "syncopate/dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
}

void fillMissing(DriverTable& table) noexcept {
#define SYNCOPATE_DRIVER(ret, name, params, args, what, roles) \
  table.name = SYNCOPATE_MISSING(ret, name, CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND);
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_DRIVER
#include "syncopate/dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
}

void fillMissing(NcclTable& table) noexcept {
#define SYNCOPATE_NCCL(ret, name, params, args, what, roles) table.name = SYNCOPATE_MISSING(ret, name, ncclSystemError);
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
}

#define SYNCOPATE_RESOLVE(name)                                                   \
  if (void* function = library.resolve(#name); function != nullptr) {            \
    table.name = reinterpret_cast<decltype(table.name)>(function);               \
  }

void fillReal(CudartTable& table, const RealLibrary& library) noexcept {
  fillMissing(table);
#define SYNCOPATE_CUDART(ret, name, params, args, what, roles) SYNCOPATE_RESOLVE(name)
#define SYNCOPATE_CUDART_MANUAL SYNCOPATE_CUDART
#include "syncopate/dispatch/cudart_api.inc"
#undef SYNCOPATE_CUDART_MANUAL
#undef SYNCOPATE_CUDART
}

void fillReal(DriverTable& table, const RealLibrary& library) noexcept {
  fillMissing(table);
#define SYNCOPATE_DRIVER(ret, name, params, args, what, roles) SYNCOPATE_RESOLVE(name)
#define SYNCOPATE_DRIVER_MANUAL SYNCOPATE_DRIVER
#include "syncopate/dispatch/driver_api.inc"
#undef SYNCOPATE_DRIVER_MANUAL
#undef SYNCOPATE_DRIVER
}

void fillReal(NcclTable& table, const RealLibrary& library) noexcept {
  fillMissing(table);
#define SYNCOPATE_NCCL(ret, name, params, args, what, roles) SYNCOPATE_RESOLVE(name)
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
}

void fillHelpers(CudartHelpers& helpers, const RealLibrary& library) noexcept {
#define SYNCOPATE_CUDART_HELPER(ret, name, params) \
  helpers.name = reinterpret_cast<decltype(helpers.name)>(library.resolve(#name));
#include "syncopate/dispatch/cudart_helpers.inc"
#undef SYNCOPATE_CUDART_HELPER
}

void fillHelpers(DriverHelpers& helpers, const RealLibrary& library) noexcept {
#define SYNCOPATE_DRIVER_HELPER(ret, name, params) \
  helpers.name = reinterpret_cast<decltype(helpers.name)>(library.resolve(#name));
#include "syncopate/dispatch/driver_helpers.inc"
#undef SYNCOPATE_DRIVER_HELPER
}

void fillHelpers(NcclHelpers& helpers, const RealLibrary& library) noexcept {
#define SYNCOPATE_NCCL_HELPER(ret, name, params) \
  helpers.name = reinterpret_cast<decltype(helpers.name)>(library.resolve(#name));
#include "syncopate/dispatch/nccl_helpers.inc"
#undef SYNCOPATE_NCCL_HELPER
}

// What the layers call for NCCL: each real function, entered through a scope that marks the
// thread as inside NCCL for the call (nccl_threads.hpp), so that what NCCL does inside it (the
// threads it starts above all) is known as NCCL's own.
#define SYNCOPATE_NCCL(ret, name, params, args, what, roles)   \
  ret enterReal_##name params {                                \
    const NcclCallScope inside_nccl;                           \
    return ncclChain.real.name args;                           \
  }
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL

constinit NcclTable ncclEntered{};

// The table the first layer sits on.
const CudartTable* bottomOf(Chain<CudartTable, CudartHelpers>& chain) noexcept { return &chain.real; }
const DriverTable* bottomOf(Chain<DriverTable, DriverHelpers>& chain) noexcept { return &chain.real; }
const NcclTable* bottomOf(Chain<NcclTable, NcclHelpers>&) noexcept {
#define SYNCOPATE_NCCL(ret, name, params, args, what, roles) ncclEntered.name = enterReal_##name;
#include "syncopate/dispatch/nccl_api.inc"
#undef SYNCOPATE_NCCL
  return &ncclEntered;
}

template <class Table>
const Table& missingTable() noexcept {
  static const Table table = [] {
    Table t;
    fillMissing(t);
    return t;
  }();
  return table;
}

template <class Table, class Helpers, class Wrap>
const Table& build(Chain<Table, Helpers>& chain, std::atomic<const Table*>& top, Wrap wrapOf) noexcept {
  std::lock_guard lock(chain.mutex);
  if (const Table* built = top.load(std::memory_order_acquire)) return *built;
  if (!chain.library.find()) return missingTable<Table>();
  fillReal(chain.real, chain.library);
  fillHelpers(chain.helpers, chain.library);
  const Table* below = bottomOf(chain);
  const LayerList& list = activeLayers();
  for (int i = 0; i < list.count; ++i) {
    auto wrap = wrapOf(*list.layers[i]);
    if (wrap == nullptr) continue;
    chain.layered[i] = *below;
    wrap(chain.layered[i], *below);
    below = &chain.layered[i];
  }
  top.store(below, std::memory_order_release);
  return *below;
}

}  // namespace

const CudartTable& buildCudart() noexcept {
  return build(cudartChain, cudartTop, [](const Layer& layer) { return layer.wrapCudart; });
}

const DriverTable& buildDriver() noexcept {
  return build(driverChain, driverTop, [](const Layer& layer) { return layer.wrapDriver; });
}

const NcclTable& buildNccl() noexcept {
  return build(ncclChain, ncclTop, [](const Layer& layer) { return layer.wrapNccl; });
}

}  // namespace syncopate::preload::detail

namespace syncopate::preload {

// The real table is final once the top is published (release/acquire on the top pointer).
const CudartTable* realCudart() noexcept {
  (void)cudart();
  return detail::cudartTop.load(std::memory_order_acquire) ? &detail::cudartChain.real : nullptr;
}

const DriverTable* realDriver() noexcept {
  (void)driver();
  return detail::driverTop.load(std::memory_order_acquire) ? &detail::driverChain.real : nullptr;
}

const NcclTable* realNccl() noexcept {
  (void)nccl();
  return detail::ncclTop.load(std::memory_order_acquire) ? &detail::ncclChain.real : nullptr;
}

const CudartHelpers* cudartHelpers() noexcept {
  return realCudart() != nullptr ? &detail::cudartChain.helpers : nullptr;
}

const DriverHelpers* driverHelpers() noexcept {
  return realDriver() != nullptr ? &detail::driverChain.helpers : nullptr;
}

const NcclHelpers* ncclHelpers() noexcept {
  return realNccl() != nullptr ? &detail::ncclChain.helpers : nullptr;
}

void* resolveRealCudart(const char* name) noexcept {
  return realCudart() != nullptr ? detail::cudartChain.library.resolve(name) : nullptr;
}

}  // namespace syncopate::preload

// The kernel registry, the kernel cost model and kernel launches.
#include "machine.hpp"
#include "mangled_signature.hpp"

#include <simgpu/core/kernels.hpp>
#include <simgpu/core/runtime.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>

namespace simgpu {
namespace {

struct KernelRegistry {
  std::shared_mutex mu;
  std::unordered_map<const void*, const KernelInfo*> by_host_function;
  std::vector<const KernelInfo*> replaced;  // kept: launches already enqueued may use them
  std::unordered_set<const KernelInfo*> handles;  // every entry, current or replaced
};

KernelRegistry& kernelRegistry() {
  static KernelRegistry* const r = new KernelRegistry();  // entries must outlive running launches
  return *r;
}

// Prints `message` once per distinct text (profile problems found at launch time).
void reportOnce(const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> reported;
  std::lock_guard lock(mu);
  if (reported.insert(message).second) std::fprintf(stderr, "simgpu: %s\n", message.c_str());
}

// The value of integer parameter `index`, or nothing (with a message) if it is not one.
bool integerParam(const KernelInfo& k, int index, void* const* args, double& value) {
  const auto i = static_cast<std::size_t>(index);
  const char* problem = nullptr;
  if (!k.params_known)
    problem = "its parameter types are unknown (an extern \"C\" kernel or an unparsed name)";
  else if (i >= k.params.size())
    problem = "it has fewer parameters";
  else if (k.params[i].type != ParamType::Signed && k.params[i].type != ParamType::Unsigned &&
           k.params[i].type != ParamType::Bool)
    problem = "that parameter is not an integer";
  if (problem != nullptr) {
    reportOnce("profile " + profile().source + ": kernel " + k.name + " (" + k.mangled +
               "): parameter " + std::to_string(index) + " cannot be used: " + problem +
               "; the kernel takes default_kernel_ns");
    return false;
  }
  const ParamInfo& p = k.params[i];
  const void* v = args[i];
  const bool is_signed = p.type == ParamType::Signed;
  switch (p.size) {
    case 1: value = is_signed ? *static_cast<const std::int8_t*>(v) : *static_cast<const std::uint8_t*>(v); break;
    case 2: value = is_signed ? *static_cast<const std::int16_t*>(v) : *static_cast<const std::uint16_t*>(v); break;
    case 4: value = is_signed ? *static_cast<const std::int32_t*>(v) : *static_cast<const std::uint32_t*>(v); break;
    case 8: value = is_signed ? static_cast<double>(*static_cast<const std::int64_t*>(v))
                              : static_cast<double>(*static_cast<const std::uint64_t*>(v)); break;
    default: return false;
  }
  return true;
}

bool product(const KernelInfo& k, const ParamProduct& term, void* const* args, double& out) {
  out = term.coef;
  for (int index : term.params) {
    double v = 0;
    if (!integerParam(k, index, args, v)) return false;
    out *= v;
  }
  return true;
}

}  // namespace

cudaError_t validateLaunch(const KernelInfo& k, dim3 grid, dim3 block, std::size_t shared) {
  const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0)
    return cudaErrorInvalidConfiguration;
  if (block.x > 1024 || block.y > 1024 || block.z > 64 || threads > 1024)
    return cudaErrorInvalidConfiguration;
  if (grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535) return cudaErrorInvalidConfiguration;
  if (shared > static_cast<std::size_t>(k.max_dynamic_shared_bytes)) return cudaErrorInvalidValue;
  return cudaSuccess;
}

namespace {

// Arguments copied at launch time (the caller's array points at its own locals), laid out as
// the kernel's parameter buffer.
struct CopiedArgs {
  static constexpr std::size_t kInline = 256;
  std::array<std::byte, kInline> inline_bytes{};
  std::vector<std::byte> heap_bytes;
  std::byte* data() { return heap_bytes.empty() ? inline_bytes.data() : heap_bytes.data(); }
};

}  // namespace

const KernelCostSpec* KernelInfo::cost() const {
  resolve();
  return cost_;
}

CpuKernel KernelInfo::cpuImplementation() const {
  resolve();
  return cpu_;
}

void KernelInfo::resolve() const {
  std::call_once(resolved_, [this] {
    cost_ = profile().findKernel(name);
    const std::string symbol = "simgpu_cpu_" + mangled;
    cpu_ = reinterpret_cast<CpuKernel>(dlsym(RTLD_DEFAULT, symbol.c_str()));
    // A module loaded with RTLD_LOCAL (a Python extension, a plugin) is not searched by
    // RTLD_DEFAULT: look in the module that holds the kernel's host stub.
    Dl_info where{};
    if (cpu_ == nullptr && dladdr(host_function, &where) != 0 && where.dli_fname != nullptr) {
      if (void* module = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
        cpu_ = reinterpret_cast<CpuKernel>(dlsym(module, symbol.c_str()));
        dlclose(module);
      }
    }
  });
}

namespace {

// The module's offsets and sizes replace what the name left unknown; the name keeps saying
// which parameters are integers (the cost model's question).
void applyModuleLayout(KernelSignature& k, const std::vector<ParamSpan>& spans) {
  if (!k.params_known || k.params.size() != spans.size()) k.params.assign(spans.size(), ParamInfo{});
  k.params_bytes = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    k.params[i].offset = spans[i].offset;
    k.params[i].size = spans[i].size;
    k.params_bytes = std::max(k.params_bytes, spans[i].offset + spans[i].size);
  }
  k.layout_known = true;
}

}  // namespace

const KernelInfo& registerKernel(const void* host_function, const char* device_name,
                                 const ModuleParamLayouts* module) {
  auto* k = new KernelInfo();  // never freed: see kernelRegistry()
  k->host_function = host_function;
  k->mangled = device_name != nullptr ? device_name : "";
  static_cast<KernelSignature&>(*k) = detail::describeMangledName(k->mangled);
  if (module != nullptr) {
    if (auto it = module->find(k->mangled); it != module->end()) applyModuleLayout(*k, it->second);
  }
  KernelRegistry& r = kernelRegistry();
  std::unique_lock lock(r.mu);
  const KernelInfo*& slot = r.by_host_function[host_function];
  if (slot != nullptr) r.replaced.push_back(slot);
  slot = k;
  r.handles.insert(k);
  return *k;
}

const KernelInfo* findKernel(const void* host_function) {
  KernelRegistry& r = kernelRegistry();
  std::shared_lock lock(r.mu);
  auto it = r.by_host_function.find(host_function);
  return it == r.by_host_function.end() ? nullptr : it->second;
}

const KernelInfo* kernelFromHandle(const void* handle) {
  KernelRegistry& r = kernelRegistry();
  std::shared_lock lock(r.mu);
  const auto* k = static_cast<const KernelInfo*>(handle);
  return r.handles.contains(k) ? k : nullptr;
}

void setMaxDynamicSharedBytes(const KernelInfo& kernel, int bytes) {
  KernelRegistry& r = kernelRegistry();
  std::unique_lock lock(r.mu);
  const_cast<KernelInfo&>(kernel).max_dynamic_shared_bytes = bytes;
}

KernelSignature describeKernel(const char* device_name) {
  return detail::describeMangledName(device_name);
}

TimeNs kernelDuration(const KernelInfo& k, void* const* args) {
  const Profile& p = profile();
  const TimeNs floor = p.device.min_kernel_ns;
  const KernelCostSpec* spec = k.cost();
  if (spec == nullptr) return std::max(p.default_kernel_ns, floor);
  double flops = 0;
  double bytes = 0;
  if ((spec->flops && !product(k, *spec->flops, args, flops)) ||
      (spec->bytes && !product(k, *spec->bytes, args, bytes)))
    return std::max(p.default_kernel_ns, floor);
  const double compute_s = flops / (p.device.flops * spec->efficiency);
  const double memory_s = bytes / p.device.memory_bandwidth;
  const double ns = static_cast<double>(spec->fixed_ns) + std::max(compute_s, memory_s) * 1e9;
  return std::max(floor, static_cast<TimeNs>(std::llround(std::min(ns, 9e15))));
}

cudaError_t launchKernel(const KernelInfo& k, dim3 grid, dim3 block, void** args,
                         std::size_t shared_bytes, cudaStream_t stream) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  if (cudaError_t err = validateLaunch(k, grid, block, shared_bytes); err != cudaSuccess) return err;
  if (!k.params.empty() && args == nullptr) return cudaErrorInvalidValue;
  const TimeNs duration = kernelDuration(k, args);

  StreamOp op;
  op.work_class = WorkClass::Compute;
  op.kind = OpKind::Kernel;
  op.name = k.mangled;
  op.duration_ns = duration;
  const CpuKernel cpu = k.cpuImplementation();
  if (cpu == nullptr) {
    op.body = [duration](const OpContext&) {
      OpTiming t;
      t.duration_ns = duration;
      return t;
    };
    return detail::enqueueOn(stream, std::move(op), true);
  }
  if (!k.layout_known) {
    reportOnce("cannot run simgpu_cpu_" + k.mangled +
               ": the kernel's parameter layout is unknown (extern \"C\" or a class parameter)");
    return cudaErrorNotSupported;
  }
  CopiedArgs copied;
  if (k.params_bytes > CopiedArgs::kInline) copied.heap_bytes.resize(k.params_bytes);
  std::byte* buffer = copied.data();
  for (std::size_t i = 0; i < k.params.size(); ++i)
    std::memcpy(buffer + k.params[i].offset, args[i], k.params[i].size);
  op.body = [&k, cpu, duration, copied = std::move(copied)](const OpContext&) mutable {
    std::array<void*, 64> inline_pointers{};
    std::vector<void*> heap_pointers;
    void** pointers = inline_pointers.data();
    if (k.params.size() > inline_pointers.size()) {
      heap_pointers.resize(k.params.size());
      pointers = heap_pointers.data();
    }
    for (std::size_t i = 0; i < k.params.size(); ++i) pointers[i] = copied.data() + k.params[i].offset;
    cpu(pointers);
    OpTiming t;
    t.duration_ns = duration;
    return t;
  };
  // CUDA refuses a kernel launched into a stream of another device than the current one.
  return detail::enqueueOn(stream, std::move(op), true);
}

cudaError_t kernelParamInfo(const KernelInfo* k, std::size_t index, std::size_t* offset, std::size_t* size,
                            int* is_pointer) {
  if (k == nullptr) return cudaErrorInvalidDeviceFunction;
  if (!k->layout_known) return cudaErrorNotSupported;
  if (index >= k->params.size() || offset == nullptr) return cudaErrorInvalidValue;
  const ParamInfo& p = k->params[index];
  *offset = p.offset;
  if (size != nullptr) *size = p.size;
  if (is_pointer != nullptr) *is_pointer = p.type == ParamType::Pointer ? 1 : 0;
  return cudaSuccess;
}

}  // namespace simgpu

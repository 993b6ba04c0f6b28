#include "syncopate/dispatch/kernel_layout.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>

#include "syncopate/dispatch/kernel_registry.hpp"
#include "syncopate/dispatch/log.hpp"
#include "syncopate/dispatch/tables.hpp"

namespace syncopate::preload {
namespace {

// The most parameters followed (CUDA allows 32 KiB of them); a kernel with more is unreadable.
constexpr int kMaxParams = 1024;

// How the driver's query answered for one parameter.
enum class Answer : std::uint8_t {
  Given,       // offset and size
  PastTheLast, // InvalidValue: the index is the parameter count
  Missing,     // the runtime or driver has no such query (older than 12.4)
  Refused,     // it has one, but not for this function
};

struct QueryContext {
  const KernelInfo& kernel;
  bool runtime_error_set = false;  // a runtime answer other than success set the thread's last error
};

Answer runtimeAnswer(cudaError_t error) noexcept {
  if (error == cudaSuccess) return Answer::Given;
  if (error == cudaErrorInvalidValue) return Answer::PastTheLast;
  const bool missing = error == cudaErrorCallRequiresNewerDriver || error == cudaErrorNotSupported ||
                       error == cudaErrorSymbolNotFound;
  return missing ? Answer::Missing : Answer::Refused;
}

Answer driverAnswer(CUresult error) noexcept {
  if (error == CUDA_SUCCESS) return Answer::Given;
  if (error == CUDA_ERROR_INVALID_VALUE) return Answer::PastTheLast;
  return error == CUDA_ERROR_NOT_SUPPORTED || error == CUDA_ERROR_NOT_FOUND ? Answer::Missing : Answer::Refused;
}

Answer ask(QueryContext& context, std::size_t index, std::size_t& offset, std::size_t& size) noexcept {
  const KernelInfo& kernel = context.kernel;
  if (kernel.driverFunction != nullptr) {
    const DriverHelpers* helpers = driverHelpers();
    if (kernel.libraryKernel) {
      if (helpers == nullptr || helpers->cuKernelGetParamInfo == nullptr) return Answer::Missing;
      return driverAnswer(
          helpers->cuKernelGetParamInfo(reinterpret_cast<CUkernel>(kernel.driverFunction), index, &offset, &size));
    }
    if (helpers == nullptr || helpers->cuFuncGetParamInfo == nullptr) return Answer::Missing;
    return driverAnswer(helpers->cuFuncGetParamInfo(kernel.driverFunction, index, &offset, &size));
  }
  const CudartHelpers* helpers = cudartHelpers();
  if (kernel.hostFunction == nullptr || helpers == nullptr || helpers->cudaFuncGetParamInfo == nullptr) {
    return Answer::Missing;
  }
  const cudaError_t error = helpers->cudaFuncGetParamInfo(kernel.hostFunction, index, &offset, &size);
  if (error != cudaSuccess) context.runtime_error_set = true;
  return runtimeAnswer(error);
}

void sayOnceQueryMissing() noexcept {
  static std::atomic<bool> said{false};
  if (!said.exchange(true, std::memory_order_relaxed)) {
    log(LogLevel::Warn,
        "the CUDA runtime or driver has no kernel parameter query (cudaFuncGetParamInfo / cuFuncGetParamInfo, CUDA "
        "12.4 and later): parameter layouts come from kernel names where every parameter is a pointer or a number; "
        "launches of other kernels are treated as touching anything");
  }
}

// Offsets by the ABI's natural alignment, from sizes the types alone give.
bool layoutFromTypes(const ParamType* types, int count, ParamSlot* slots) noexcept {
  std::uint32_t offset = 0;
  for (int i = 0; i < count; ++i) {
    const std::uint32_t size = types[i].size;
    if (size == 0) return false;
    offset = (offset + size - 1) / size * size;
    slots[i] = {offset, size, types[i].kind};
    offset += size;
  }
  return true;
}

// What a parameter is, from its type where the name and the driver agree on it.
ParamKind kindOf(const ParamType& type, std::uint32_t size) noexcept {
  if (type.kind == ParamKind::Pointer) return size == sizeof(std::uint64_t) ? ParamKind::Pointer : ParamKind::Scanned;
  return type.kind;
}

const ParamLayout* finished(ParamSlot* slots, int count) noexcept {
  static_assert(kMaxParams <= UINT16_MAX + 1, "a parameter's index fits ParamLayout::pointers");
  const auto n = static_cast<std::size_t>(count);
  auto* layout = new (std::nothrow) ParamLayout;
  auto* kept = count > 0 ? new (std::nothrow) ParamSlot[n] : nullptr;
  auto* pointers = count > 0 ? new (std::nothrow) std::uint16_t[n] : nullptr;
  if (layout == nullptr || (count > 0 && (kept == nullptr || pointers == nullptr))) {
    delete layout;
    delete[] kept;
    delete[] pointers;
    return nullptr;
  }
  layout->readable = true;
  layout->count = static_cast<std::uint32_t>(count);
  for (int i = 0; i < count; ++i) {
    kept[i] = slots[i];
    if (slots[i].offset + slots[i].size > layout->buffer_bytes) layout->buffer_bytes = slots[i].offset + slots[i].size;
    if (slots[i].kind == ParamKind::Scanned) layout->scans = true;
    if (slots[i].kind == ParamKind::Pointer) pointers[layout->pointer_count++] = static_cast<std::uint16_t>(i);
  }
  layout->slots = kept;
  layout->pointers = pointers;
  return layout;
}

constinit const ParamLayout kUnreadable{};

// Once per kernel, at its first launch: the scratch space is shared and the work serialised.
constinit std::mutex resolving;
constinit ParamType types[kMaxParams];
constinit ParamSlot slots[kMaxParams];

// Called with `resolving` held.
const ParamLayout* learn(const KernelInfo& kernel, const CudartHelpers* runtime) noexcept {
  const bool demangled = std::strcmp(kernel.displayName, kernel.mangledName) != 0;
  const int typed = demangled ? parameterTypesOf(kernel.displayName, types, kMaxParams) : -1;

  QueryContext context{kernel};
  int count = 0;
  Answer answer = Answer::Given;
  for (; count <= kMaxParams; ++count) {
    std::size_t offset = 0, size = 0;
    answer = ask(context, static_cast<std::size_t>(count), offset, size);
    if (answer != Answer::Given || count == kMaxParams) break;
    slots[count] = {static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(size), ParamKind::Scanned};
  }
  if (context.runtime_error_set && runtime != nullptr && runtime->cudaGetLastError != nullptr) (void)runtime->cudaGetLastError();

  if (answer == Answer::PastTheLast) {
    // A name that parses into another number of parameters says nothing about them: all scanned.
    for (int i = 0; i < count; ++i) slots[i].kind = typed == count ? kindOf(types[i], slots[i].size) : ParamKind::Scanned;
    return finished(slots, count);
  }
  if (answer == Answer::Missing) sayOnceQueryMissing();
  if (typed < 0 || typed > kMaxParams || !layoutFromTypes(types, typed, slots)) return &kUnreadable;
  return finished(slots, typed);
}

}  // namespace

const ParamLayout* learnParamLayout(const KernelInfo& kernel) noexcept {
  const CudartHelpers* runtime = kernel.driverFunction == nullptr ? cudartHelpers() : nullptr;
  // The runtime's query records its InvalidValue (past the last parameter) as the thread's last
  // error, which is cleared afterwards; an error the program has not read yet must not be.
  if (runtime != nullptr && runtime->cudaPeekAtLastError != nullptr && runtime->cudaPeekAtLastError() != cudaSuccess) {
    return nullptr;
  }
  std::lock_guard lock(resolving);
  const ParamLayout* layout = kernel.layout.load(std::memory_order_acquire);  // another thread's
  if (layout == nullptr && (layout = learn(kernel, runtime)) != nullptr) {
    kernel.layout.store(layout, std::memory_order_release);
  }
  return layout;
}

}  // namespace syncopate::preload

// dlsym, interposed for one purpose: a library that carries its own copy of the CUDA runtime
// (cuBLAS and cuBLASLt link it statically) opens libcuda.so.1 and looks up cuGetProcAddress
// (and sometimes the launch functions) by handle, which no symbol interposition reaches. Its
// launches would then bypass the collector and the runtime alike: on a real GPU every cuBLAS
// GEMM of a training step went unrecorded. A lookup by handle that finds a function of
// libcuda.so.1 which the preload library interposes gets the interposer instead (and
// cuGetProcAddress, once interposed, hands out interposers for what it is asked), unless the
// caller is one of the libraries whose driver calls are already seen one level up: the dynamic
// CUDA runtime and NCCL (their exported calls are interposed; seeing their driver calls too would
// count every op twice), CUPTI (its driver calls are its own), libcuda itself, and this library.
//
// RTLD_DEFAULT and RTLD_NEXT depend on who asks (the caller's object decides the scope), so
// those lookups jump straight to the real dlsym, the caller's return address untouched; only a
// lookup by handle reaches the C++ below, also by a jump, so that its return address is still
// the caller's. x86-64 only: elsewhere dlsym is not interposed and such launches stay unseen.
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string_view>

#include "syncopate/dispatch/log.hpp"
#include "syncopate/dispatch/proc_address.hpp"

#if defined(__x86_64__)

using DlsymFunction = void* (*)(void*, const char*);

// Read by the trampoline: the real dlsym, or null until the constructor found it.
extern "C" {
[[gnu::visibility("hidden")]] constinit DlsymFunction syncopate_real_dlsym = nullptr;
}

namespace syncopate::preload {
namespace {

DlsymFunction findRealDlsym() noexcept {
  // glibc 2.34 moved dlsym into libc under a new version; older ones have only the first.
  for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5"}) {
    if (void* real = dlvsym(RTLD_NEXT, "dlsym", version)) return reinterpret_cast<DlsymFunction>(real);
  }
  return nullptr;
}

[[gnu::constructor(101)]] void resolveRealDlsym() noexcept { syncopate_real_dlsym = findRealDlsym(); }

bool fileNameStartsWith(const char* path, std::string_view prefix) noexcept {
  if (path == nullptr) return false;
  const char* slash = std::strrchr(path, '/');
  return std::string_view(slash != nullptr ? slash + 1 : path).starts_with(prefix);
}

// The object `address` belongs to, by file name.
const char* objectOf(const void* address) noexcept {
  Dl_info info{};
  return dladdr(address, &info) != 0 ? info.dli_fname : nullptr;
}

bool driverSeenOneLevelUp(const void* caller) noexcept {
  static const int self = 0;
  const char* name = objectOf(caller);
  if (name == nullptr) return true;  // nothing known of the caller: leave its lookup alone
  if (name == objectOf(&self)) return true;
  for (std::string_view library : {"libcudart.so", "libnccl.so", "libcupti.so", "libcuda.so"}) {
    if (fileNameStartsWith(name, library)) return true;
  }
  return false;
}

std::atomic<bool> saidOnce{false};

}  // namespace
}  // namespace syncopate::preload

extern "C" [[gnu::visibility("hidden"), gnu::noinline]] void* syncopate_dlsym_by_handle(void* handle,
                                                                                          const char* symbol) {
  namespace sp = syncopate::preload;
  // Reached by a jump from dlsym: the return address is dlsym's caller's.
  const void* caller = __builtin_return_address(0);
  if (syncopate_real_dlsym == nullptr) syncopate_real_dlsym = sp::findRealDlsym();
  if (syncopate_real_dlsym == nullptr) return nullptr;
  void* found = syncopate_real_dlsym(handle, symbol);
  if (found == nullptr || symbol == nullptr || std::strncmp(symbol, "cu", 2) != 0) return found;
  if (!sp::fileNameStartsWith(sp::objectOf(found), "libcuda.so") || sp::driverSeenOneLevelUp(caller)) return found;
  void* interposer = sp::driverInterposerNamed(symbol);
  if (interposer == nullptr) return found;
  if (!sp::saidOnce.exchange(true)) {
    sp::log(sp::LogLevel::Debug, "%s looked up libcuda.so.1's %s by handle: handed out the interposer",
            sp::objectOf(caller), symbol);
  }
  return interposer;
}

// RTLD_DEFAULT is 0 and RTLD_NEXT is -1 in glibc.
asm(R"(
  .text
  .globl dlsym
  .type dlsym, @function
dlsym:
  .cfi_startproc
  testq %rdi, %rdi
  je 1f
  cmpq $-1, %rdi
  je 1f
  jmp syncopate_dlsym_by_handle
1:
  movq syncopate_real_dlsym(%rip), %rax
  testq %rax, %rax
  je syncopate_dlsym_by_handle
  jmp *%rax
  .cfi_endproc
  .size dlsym, .-dlsym
)");

#endif

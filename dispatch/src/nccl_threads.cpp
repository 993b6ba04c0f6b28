#include "syncopate/dispatch/nccl_threads.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include <cerrno>
#include <cstdlib>

#include "syncopate/dispatch/export.hpp"

namespace syncopate::preload {
namespace {

thread_local int t_nccl_depth = 0;
thread_local bool t_nccl_thread = false;

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

CreateFn realCreate() noexcept {
  static const CreateFn real = reinterpret_cast<CreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
  return real;
}

// What a thread NCCL starts runs first: it marks itself as NCCL's, then runs NCCL's routine.
struct NcclStart {
  void* (*routine)(void*);
  void* argument;
};

void* startNcclThread(void* raw) {
  const NcclStart start = *static_cast<NcclStart*>(raw);
  std::free(raw);
  t_nccl_thread = true;
  return start.routine(start.argument);
}

}  // namespace

bool onNcclThread() noexcept { return t_nccl_thread; }

bool insideNccl() noexcept { return t_nccl_thread || t_nccl_depth > 0; }

NcclCallScope::NcclCallScope() noexcept { ++t_nccl_depth; }
NcclCallScope::~NcclCallScope() { --t_nccl_depth; }

}  // namespace syncopate::preload

namespace sp = ::syncopate::preload;

extern "C" SYNCOPATE_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                               void* (*routine)(void*), void* argument) {
  const sp::CreateFn real = sp::realCreate();
  if (real == nullptr) return EAGAIN;
  if (!sp::insideNccl()) return real(thread, attr, routine, argument);
  // malloc, not new: the start record is freed by the new thread, whatever it was built with.
  auto* start = static_cast<sp::NcclStart*>(std::malloc(sizeof(sp::NcclStart)));
  if (start == nullptr) return EAGAIN;
  *start = {routine, argument};
  const int result = real(thread, attr, sp::startNcclThread, start);
  if (result != 0) std::free(start);
  return result;
}

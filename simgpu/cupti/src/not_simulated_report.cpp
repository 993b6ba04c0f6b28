// The report of the generated stand-ins (not_simulated.h).
#include <cupti_result.h>

#include <atomic>
#include <cstdio>

#include "not_simulated.h"

extern "C" int simgpu_cupti_not_simulated(const char* name, int* reported) {
  auto* flag = reinterpret_cast<std::atomic<int>*>(reported);
  if (flag->exchange(1) == 0) std::fprintf(stderr, "simgpu: %s is not simulated\n", name);
  return CUPTI_ERROR_NOT_SUPPORTED;
}

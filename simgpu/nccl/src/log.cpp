#include "log.hpp"

#include <cstdio>
#include <mutex>
#include <set>

namespace simgpu::nccl {
namespace {

std::mutex g_mu;
std::string g_last_error;

}  // namespace

ncclResult_t fail(ncclResult_t code, const std::string& message) {
  std::fprintf(stderr, "simgpu NCCL: %s\n", message.c_str());
  std::lock_guard lock(g_mu);
  g_last_error = message;
  return code;
}

ncclResult_t fail(const Status& status) { return fail(status.code, status.message); }

ncclResult_t notSimulated(const char* api) {
  static std::set<std::string> reported;
  std::lock_guard lock(g_mu);
  if (reported.insert(api).second) std::fprintf(stderr, "simgpu: %s is not simulated\n", api);
  g_last_error = std::string(api) + " is not simulated";
  return ncclInvalidUsage;
}

const char* lastErrorText() {
  thread_local std::string copy;
  std::lock_guard lock(g_mu);
  copy = g_last_error;
  return copy.c_str();
}

}  // namespace simgpu::nccl

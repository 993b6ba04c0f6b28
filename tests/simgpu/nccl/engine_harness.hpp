// Helpers for the engine's tests: ranks of a communicator as threads of this process (the
// "several devices of one process" shape) or as forked processes (the "one rank per
// process" shape), with deterministic per-rank inputs.
#pragma once

#include "simgpu/nccl/collective_task.hpp"
#include "simgpu/nccl/datatype.hpp"
#include "simgpu/nccl/endpoint.hpp"
#include "simgpu/nccl/p2p_task.hpp"
#include "simgpu/nccl/task_runner.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace simgpu::nccl::testing {

inline CostParams testCost() {
  CostParams cost;
  cost.links.intra_process = {1000, 1e11};
  cost.links.intra_host = {2000, 5e10};
  cost.links.inter_host = {10000, 1e10};
  return cost;
}

inline constexpr std::int64_t kTestTimeoutNs = 20'000'000'000;

// Joins rank `rank` of the communicator `key` (attach, then wait for the others).
inline Status join(const CommKey& key, int nranks, int rank, std::size_t chunk, std::unique_ptr<Endpoint>* out,
                   std::int64_t timeout_ns = kTestTimeoutNs) {
  RankIdentity self{rank, 0, static_cast<std::int64_t>(getpid())};
  if (Status st = Endpoint::attach(key, nranks, rank, self, makeGeometry(nranks, chunk), timeout_ns, out); !st.ok()) {
    return st;
  }
  return (*out)->awaitAllRanks();
}

// body(rank) on one thread per rank; returns each rank's result.
template <typename Result>
std::vector<Result> onThreads(int nranks, const std::function<Result(int)>& body) {
  std::vector<Result> results(static_cast<std::size_t>(nranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r] { results[static_cast<std::size_t>(r)] = body(r); });
  }
  for (auto& t : threads) t.join();
  return results;
}

// body(rank) in one forked process per rank; returns each child's exit status (the body's
// return value, or 128 + signal).
inline std::vector<int> onProcesses(int nranks, const std::function<int(int)>& body) {
  std::vector<pid_t> pids;
  for (int r = 0; r < nranks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) _exit(body(r));
    pids.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

// For forked ranks: prints why a step failed and returns `code` as the exit status.
inline int report(const Status& st, int code) {
  std::fprintf(stderr, "rank failed: %s\n", st.message.c_str());
  return code;
}

inline Status runOne(Task& task) {
  Task* tasks[] = {&task};
  return runTasks(tasks);
}

// A deterministic, type-appropriate input: small values so that sums and products of a few
// ranks stay meaningful in every type (including fp8).
inline void fillInput(ncclDataType_t type, int rank, std::size_t n, void* out, std::uint32_t salt = 0) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t h = static_cast<std::uint32_t>(i * 2654435761u) ^ (static_cast<std::uint32_t>(rank + 1) * 40503u) ^ salt;
    const int small = static_cast<int>(h % 7) - 3;            // -3..3
    const float frac = static_cast<float>(h % 16) / 8.0f - 1.0f;  // -1..0.875 in steps of 1/8
    char* p = static_cast<char*>(out) + i * datatypeSize(type);
    switch (type) {
      case ncclInt8: { std::int8_t v = static_cast<std::int8_t>(small); std::memcpy(p, &v, 1); break; }
      case ncclUint8: { std::uint8_t v = static_cast<std::uint8_t>(h % 5 + 1); std::memcpy(p, &v, 1); break; }
      case ncclInt32: { std::int32_t v = small * 1000 + rank; std::memcpy(p, &v, 4); break; }
      case ncclUint32: { std::uint32_t v = h % 1000 + 1; std::memcpy(p, &v, 4); break; }
      case ncclInt64: { std::int64_t v = static_cast<std::int64_t>(small) * 100000 - rank; std::memcpy(p, &v, 8); break; }
      case ncclUint64: { std::uint64_t v = h % 100000 + 1; std::memcpy(p, &v, 8); break; }
      case ncclFloat16: { std::uint16_t v = floatToHalf(frac + static_cast<float>(small)); std::memcpy(p, &v, 2); break; }
      case ncclFloat32: { float v = frac * 3.7f + static_cast<float>(small); std::memcpy(p, &v, 4); break; }
      case ncclFloat64: { double v = frac * 1.3 + small * 0.1; std::memcpy(p, &v, 8); break; }
      case ncclBfloat16: { std::uint16_t v = floatToBfloat16(frac * 2.0f + static_cast<float>(small)); std::memcpy(p, &v, 2); break; }
      case ncclFloat8e4m3: { std::uint8_t v = floatToFp8e4m3(frac + static_cast<float>(small) / 2.0f); std::memcpy(p, &v, 1); break; }
      case ncclFloat8e5m2: { std::uint8_t v = floatToFp8e5m2(frac * 4.0f); std::memcpy(p, &v, 1); break; }
      default: break;
    }
  }
}

inline std::vector<char> inputOf(ncclDataType_t type, int rank, std::size_t n, std::uint32_t salt = 0) {
  std::vector<char> v(n * datatypeSize(type));
  fillInput(type, rank, n, v.data(), salt);
  return v;
}

inline constexpr ncclDataType_t kAllTypes[] = {ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64, ncclUint64,
                                                ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16,
                                                ncclFloat8e4m3, ncclFloat8e5m2};
inline constexpr RedOp kAllOps[] = {RedOp::Sum, RedOp::Prod, RedOp::Max, RedOp::Min, RedOp::Avg};

}  // namespace simgpu::nccl::testing

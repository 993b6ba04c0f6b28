// Helpers for the engine's tests: ranks of a communicator as threads of this process (the
// "several devices of one process" shape) or as forked processes (the "one rank per
// process" shape), with deterministic per-rank inputs.
#pragma once

#include "simgpu/nccl/collective_task.hpp"
#include "simgpu/nccl/datatype.hpp"
#include "simgpu/nccl/endpoint.hpp"
#include "simgpu/nccl/p2p_task.hpp"
#include "simgpu/nccl/task_runner.hpp"
#include "reference.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
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
  // One object per thread (a std::vector<bool> would share words between threads).
  std::vector<std::optional<Result>> slots(static_cast<std::size_t>(nranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r] { slots[static_cast<std::size_t>(r)] = body(r); });
  }
  for (auto& t : threads) t.join();
  std::vector<Result> results;
  for (auto& slot : slots) results.push_back(std::move(*slot));
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

}  // namespace simgpu::nccl::testing

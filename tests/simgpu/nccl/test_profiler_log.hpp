// What the test profiler plugin (test_profiler_plugin.cpp) saw, for the test that loads it.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace simgpu::nccl::testing {

struct ProfiledEvent {
  std::uint64_t type = 0;
  const ProfiledEvent* parent = nullptr;
  int rank = -1;
  std::string func;
  std::string datatype;
  std::size_t count = 0;
  int peer_or_root = -1;
  std::uint64_t seq = 0;
  std::string algo;
  int channels = 0;  // Coll: nChannels
  int group_depth = -1;
  std::uint64_t timer_start = 0;  // KernelCh: pTimer at start and at KernelChStop
  std::uint64_t timer_stop = 0;
  bool stopped = false;
};

struct ProfiledComm {
  std::uint64_t comm_id = 0;
  std::string name;
  int nodes = 0;
  int nranks = 0;
  int rank = -1;
  bool finalized = false;
};

struct ProfilerLog {
  std::mutex mu;
  std::vector<ProfiledComm*> comms;
  std::vector<ProfiledEvent*> events;  // never freed: handles stay valid as parents
};

}  // namespace simgpu::nccl::testing

// Exported by the test plugin.
extern "C" simgpu::nccl::testing::ProfilerLog* simgpuTestProfilerLog();

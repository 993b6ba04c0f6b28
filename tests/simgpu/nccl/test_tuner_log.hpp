// What the test tuner plugin (test_tuner_plugin.cpp) was called with, shared with the tests
// through the plugin's simgpuTestTunerLog().
#pragma once

#include "syncopate/plugin_abi/nccl_tuner_v5.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace simgpu::nccl::testing {

struct TunerInit {
  std::uint64_t comm_id = 0;
  std::size_t nranks = 0;
  std::size_t nnodes = 0;
  ncclNvlDomainInfo_v5_t domains{};
  ncclTunerConstants_v5_t constants{};
  bool finalized = false;
};

struct TunerCall {
  const TunerInit* comm = nullptr;
  ncclFunc_t func = ncclFuncAllReduce;
  std::size_t bytes = 0;
  int num_pipe_ops = 0;
  float ring_simple_us = 0;  // collCostTable[RING][SIMPLE]
  float ring_ll_us = 0;      // collCostTable[RING][LL]: ignored by simgpu
  int num_algo = 0;
  int num_proto = 0;
  int channels_in = -1;  // *nChannels as given
};

struct TunerLog {
  std::mutex mu;
  std::vector<TunerInit*> comms;  // never freed: the tests read them after finalize
  std::vector<TunerCall> calls;
};

}  // namespace simgpu::nccl::testing

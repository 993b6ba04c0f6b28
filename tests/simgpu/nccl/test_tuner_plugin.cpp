// A tuner plugin for the tests: records what simgpu's NCCL gives it (test_tuner_log.hpp) and sets
// *nChannels to SIMGPU_TEST_TUNER_CHANNELS (read at each call, so that a test can change it).
#include "test_tuner_log.hpp"

#include <cstdlib>

using simgpu::nccl::testing::TunerCall;
using simgpu::nccl::testing::TunerInit;
using simgpu::nccl::testing::TunerLog;

namespace {

TunerLog& log() {
  static TunerLog instance;
  return instance;
}

ncclResult_t init(void** context, uint64_t comm_id, size_t nranks, size_t nnodes, ncclDebugLogger_t,
                  ncclNvlDomainInfo_v5_t* domains, ncclTunerConstants_v5_t* constants) {
  auto* comm = new TunerInit{comm_id, nranks, nnodes, *domains, *constants, false};
  std::lock_guard lock(log().mu);
  log().comms.push_back(comm);
  *context = comm;
  return ncclSuccess;
}

ncclResult_t getCollInfo(void* context, ncclFunc_t func, size_t bytes, int num_pipe_ops, float** cost_table, int num_algo,
                         int num_proto, int, int* channels) {
  // As NCCL's own example plugin reads it: the rows of a float[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS].
  auto table = reinterpret_cast<float(*)[NCCL_NUM_PROTOCOLS]>(cost_table);
  TunerCall call{static_cast<const TunerInit*>(context), func, bytes, num_pipe_ops, table[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE],
                 table[NCCL_ALGO_RING][NCCL_PROTO_LL], num_algo, num_proto, *channels};
  {
    std::lock_guard lock(log().mu);
    log().calls.push_back(call);
  }
  if (const char* chosen = std::getenv("SIMGPU_TEST_TUNER_CHANNELS")) *channels = std::atoi(chosen);
  return ncclSuccess;
}

ncclResult_t finalize(void* context) {
  std::lock_guard lock(log().mu);
  static_cast<TunerInit*>(context)->finalized = true;
  return ncclSuccess;
}

}  // namespace

extern "C" {
__attribute__((visibility("default"))) ncclTuner_v5_t ncclTunerPlugin_v5 = {"simgpu-test-tuner", init, getCollInfo, finalize};
__attribute__((visibility("default"))) TunerLog* simgpuTestTunerLog() { return &log(); }
}

// The preload library as NCCL's tuner plugin (`ncclTunerPlugin_v5`, NCCL 2.28): `syncopate
// record` and `syncopate run` point NCCL_TUNER_PLUGIN at this library, already preloaded, so
// NCCL's dlopen finds this instance. It serves both layers:
//   - init hands NCCL's tuning constants to the recorder, which keeps the per-channel bandwidth
//     in the store (syncopate/collector/nccl_tuner_note.hpp);
//   - getCollInfo sets the channel count the plan gives the collective (the runtime,
//     syncopate/tuner_runtime/runtime_layer.hpp) and otherwise leaves NCCL's choice, its cost
//     table untouched: without a plan the plugin changes nothing NCCL does.
#include <cstdint>

#include "syncopate/collector/nccl_tuner_note.hpp"
#include "syncopate/plugin_abi/nccl_tuner_v5.h"
#include "syncopate/tuner_runtime/runtime_layer.hpp"

namespace syncopate::preload {
namespace {

trace::CollType collTypeOf(ncclFunc_t func) noexcept {
  switch (func) {
    case ncclFuncBroadcast: return trace::CollType::Broadcast;
    case ncclFuncReduce: return trace::CollType::Reduce;
    case ncclFuncAllGather: return trace::CollType::AllGather;
    case ncclFuncReduceScatter: return trace::CollType::ReduceScatter;
    case ncclFuncAllReduce: return trace::CollType::AllReduce;
    default: return trace::CollType::Unknown;
  }
}

// No per-communicator state: the plan's rules are the same for every communicator. The
// context is a non-null token, as NCCL expects one.
int g_context_token = 0;

ncclResult_t init(void** context, std::uint64_t /*commId*/, std::size_t /*nRanks*/, std::size_t nNodes,
                  ncclDebugLogger_t /*logFunction*/, ncclNvlDomainInfo_v5_t* /*nvlDomainInfo*/,
                  ncclTunerConstants_v5_t* constants) {
  if (constants != nullptr) noteNcclTunerInit(nNodes, *constants);
  *context = &g_context_token;
  return ncclSuccess;
}

ncclResult_t getCollInfo(void* /*context*/, ncclFunc_t collType, std::size_t nBytes, int /*numPipeOps*/,
                         float** /*collCostTable*/, int /*numAlgo*/, int /*numProto*/, int /*regBuff*/, int* nChannels) {
  const trace::CollType collective = collTypeOf(collType);
  if (collective == trace::CollType::Unknown || nChannels == nullptr) return ncclSuccess;
  if (const std::uint32_t planned = plannedChannels(collective, nBytes); planned > 0) {
    *nChannels = static_cast<int>(planned);
  }
  return ncclSuccess;
}

ncclResult_t finalize(void* /*context*/) { return ncclSuccess; }

}  // namespace
}  // namespace syncopate::preload

// What NCCL looks up in the library NCCL_TUNER_PLUGIN names (exported by exports.map's nccl*).
extern "C" __attribute__((visibility("default"))) const ncclTuner_v5_t ncclTunerPlugin_v5 = {
    "syncopate",
    syncopate::preload::init,
    syncopate::preload::getCollInfo,
    syncopate::preload::finalize,
};

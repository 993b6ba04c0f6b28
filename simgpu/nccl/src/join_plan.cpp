#include "join_plan.hpp"

#include "simgpu/core/runtime.hpp"

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace simgpu::nccl {
namespace {

constexpr unsigned kConfigMagic = 0xcafebeef;

CostParams costFromProfile(const simgpu::Profile& p) {
  CostParams cost;
  auto link = [](const simgpu::LinkSpec& s) { return LinkParams{static_cast<double>(s.latency_ns), s.bandwidth}; };
  cost.links.intra_process = link(p.links.intra_process);
  cost.links.intra_host = link(p.links.intra_host);
  cost.links.inter_host = link(p.links.inter_host);
  cost.bytes_scale = p.collectives.bytes_scale;
  cost.algorithm = p.collectives.algorithm == "tree" ? Algorithm::Tree : Algorithm::Ring;
  if (p.channels) cost.per_channel_bandwidth = p.channels->per_channel_bandwidth;
  return cost;
}

// Whether a caller's config struct (possibly from an older header) holds the field at
// [offset, offset + size).
bool holds(const ncclConfig_t* config, std::size_t offset, std::size_t size) { return offset + size <= config->size; }

}  // namespace

Status coreReady(const char* api) {
  if (const cudaError_t err = simgpu::initialize(); err != cudaSuccess) {
    return Status::error(ncclUnhandledCudaError, std::string(api) + ": simgpu could not start (CUDA error " +
                                                     std::to_string(static_cast<int>(err)) + ", see the message above)");
  }
  return Status::success();
}

int hostOfRank(int rank) { return rank / simgpu::profile().ranks_per_host; }

Status readConfig(const char* api, const ncclConfig_t* config, const CommConfig* inherit, CommConfig* out) {
  *out = inherit != nullptr ? *inherit : CommConfig{};
  if (inherit == nullptr) {
    // NCCL_COMM_BLOCKING sets the default of config.blocking, as in NCCL.
    const char* env = std::getenv("NCCL_COMM_BLOCKING");
    if (env != nullptr && std::strcmp(env, "0") == 0) out->blocking = false;
  }
  if (config == nullptr) return Status::success();
  if (config->magic != kConfigMagic || config->size < offsetof(ncclConfig_t, blocking) + sizeof(int)) {
    return Status::error(ncclInvalidArgument, std::string(api) +
                                                  ": config was not initialised with NCCL_CONFIG_INITIALIZER (bad magic or size)");
  }
  if (config->blocking != NCCL_CONFIG_UNDEF_INT) {
    if (config->blocking != 0 && config->blocking != 1) {
      return Status::error(ncclInvalidArgument, std::string(api) + ": config.blocking must be 0 or 1, not " +
                                                    std::to_string(config->blocking));
    }
    out->blocking = config->blocking == 1;
  }
  if (holds(config, offsetof(ncclConfig_t, commName), sizeof(config->commName)) && config->commName != nullptr) {
    out->name = config->commName;
  }
  return Status::success();
}

Status makeJoinPlan(const char* api, const CommKey& key, int nranks, int rank, int device, int host,
                    const CommConfig& config, JoinPlan* out) {
  JoinPlan plan;
  plan.key = key;
  plan.nranks = nranks;
  plan.rank = rank;
  plan.device = device;
  plan.host = host;
  plan.config = config;
  plan.cost = costFromProfile(simgpu::profile());
  plan.channels = channelPlan(simgpu::profile().channels);
  if (Status st = timeoutFromEnvironment(&plan.timeout_ns); !st.ok()) return Status::error(st.code, std::string(api) + ": " + st.message);
  if (Status st = chunkBytesFromEnvironment(&plan.chunk_bytes); !st.ok()) return Status::error(st.code, std::string(api) + ": " + st.message);
  *out = plan;
  return Status::success();
}

}  // namespace simgpu::nccl

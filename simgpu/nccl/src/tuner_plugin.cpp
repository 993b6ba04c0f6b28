#include "tuner_plugin.hpp"

#include "plugin_library.hpp"
#include "simgpu/nccl/unique_id.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

namespace simgpu::nccl {
namespace {

void logTunerWarning(ncclDebugLogLevel level, unsigned long, const char* file, int line, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  logPluginWarning("tuner", level, file, line, fmt, args);
  va_end(args);
}

const ncclTuner_v5_t* loadTuner() {
  void* library = openPluginLibrary("NCCL_TUNER_PLUGIN", "tuner");
  if (library == nullptr) return nullptr;
  auto* plugin = static_cast<const ncclTuner_v5_t*>(dlsym(library, "ncclTunerPlugin_v5"));
  if (plugin == nullptr || plugin->init == nullptr || plugin->getCollInfo == nullptr || plugin->finalize == nullptr) {
    std::fprintf(stderr, "simgpu NCCL: the tuner plugin %s has no complete ncclTunerPlugin_v5 (the only version simgpu runs); "
                         "continuing without it\n", pluginLabel("NCCL_TUNER_PLUGIN", "tuner").c_str());
    return nullptr;
  }
  return plugin;
}

double microseconds(double ns) { return ns / 1e3; }
double gigabytesPerSecond(double bytes_per_second) { return bytes_per_second / 1e9; }

// The slowest link of the communicator, as NCCL's llMaxBws speaks of it.
LinkLevel slowestLevel(std::span<const RankPlace> places) {
  LinkLevel worst = LinkLevel::IntraProcess;
  for (const RankPlace& p : places) worst = std::max(worst, linkLevel(places.front(), p));
  return worst;
}

// NCCL's constants as simgpu sees the machine: latencies of the profile's links (ring and tree,
// every protocol; NVLink and PCI are the link within a host, the network the one between hosts,
// the base latency the one within a process) and bandwidths of its channels in bytes of the
// application's data, the same in every compute-capability row and scale column (so that the
// column of the communicator's own scale, NCCL_TUNING_SCALE_1NODE/2NODES/4NODES by its node
// count, holds them whichever a plugin reads).
ncclTunerConstants_v5_t constantsOf(const TunerComm& comm) {
  ncclTunerConstants_v5_t c{};
  const LinkTable& links = comm.cost->links;
  for (int algo : {NCCL_ALGO_RING, NCCL_ALGO_TREE}) {
    for (int proto = 0; proto < NCCL_NUM_PROTOCOLS; ++proto) {
      c.baseLatencies[algo][proto] = microseconds(links.intra_process.latency_ns);
      c.hwLatencies[NCCL_HW_NVLINK][algo][proto] = microseconds(links.intra_host.latency_ns);
      c.hwLatencies[NCCL_HW_PCI][algo][proto] = microseconds(links.intra_host.latency_ns);
      c.hwLatencies[NCCL_HW_NET][algo][proto] = microseconds(links.inter_host.latency_ns);
    }
  }
  // Bandwidths of the bytes the application hands NCCL: a profile's bytes_scale makes each of
  // them cost that many bytes of link and channel, so what moves of them is that many times less.
  const double scale_bytes = comm.cost->bytes_scale > 0 ? comm.cost->bytes_scale : 1.0;
  const double link_bandwidth = links.at(slowestLevel(comm.places)).bandwidth / scale_bytes;
  const double per_channel = comm.cost->per_channel_bandwidth > 0 ? comm.cost->per_channel_bandwidth / scale_bytes
                                                                  : link_bandwidth / kFallbackChannels;
  for (int cc = 0; cc < NCCL_NUM_COMPCAPS; ++cc) {
    for (int scale = 0; scale < NCCL_NUM_TUNING_SCALES; ++scale) {
      c.llMaxBws[cc][scale] = gigabytesPerSecond(link_bandwidth);
      c.perChMaxRingLL128Bws[cc][scale] = gigabytesPerSecond(per_channel);
      c.perChMaxTreeLL128Bws[cc][scale] = gigabytesPerSecond(per_channel);
      c.perChMaxTreeBws[cc][scale] = gigabytesPerSecond(per_channel);
    }
  }
  return c;
}

bool tunerFunc(CollKind kind, ncclFunc_t* out) {
  switch (kind) {
    case CollKind::AllReduce: *out = ncclFuncAllReduce; return true;
    case CollKind::Broadcast: *out = ncclFuncBroadcast; return true;
    case CollKind::Reduce: *out = ncclFuncReduce; return true;
    case CollKind::AllGather: *out = ncclFuncAllGather; return true;
    case CollKind::ReduceScatter: *out = ncclFuncReduceScatter; return true;
    case CollKind::AlltoAll:
    case CollKind::Gather:
    case CollKind::Scatter: return false;
  }
  return false;
}

}  // namespace

const ncclTuner_v5_t* tunerPlugin() {
  static const ncclTuner_v5_t* const plugin = loadTuner();
  return plugin;
}

RankTuner initTuner(const TunerComm& comm) {
  const ncclTuner_v5_t* plugin = tunerPlugin();
  if (plugin == nullptr) return {};
  // The same id on every rank: the first bytes of the communicator's key (as the profiler's).
  std::uint64_t comm_id = 0;
  std::memcpy(&comm_id, comm.key->bytes.data(), sizeof(comm_id));
  std::vector<std::pair<int, int>> ranks_per_host;  // (host, ranks)
  for (const RankPlace& place : comm.places) {
    auto it = std::find_if(ranks_per_host.begin(), ranks_per_host.end(), [&](const auto& h) { return h.first == place.host; });
    if (it == ranks_per_host.end()) ranks_per_host.emplace_back(place.host, 1);
    else ++it->second;
  }
  const auto [fewest, most] = std::minmax_element(ranks_per_host.begin(), ranks_per_host.end(),
                                                  [](const auto& a, const auto& b) { return a.second < b.second; });
  // A host is an NVLink domain: its GPUs talk over NVLink, hosts over the network.
  ncclNvlDomainInfo_v5_t domains{static_cast<int>(ranks_per_host.size()), fewest->second, most->second};
  ncclTunerConstants_v5_t constants = constantsOf(comm);
  RankTuner out;
  if (plugin->init(&out.context, comm_id, comm.places.size(), ranks_per_host.size(), logTunerWarning, &domains, &constants) !=
      ncclSuccess) {
    return {};
  }
  return out;
}

void finalizeTuner(RankTuner& tuner) {
  if (tuner.context != nullptr) tunerPlugin()->finalize(tuner.context);
  tuner.context = nullptr;
}

int tunerChannels(const RankTuner& tuner, const CostParams& cost, CollKind kind, std::size_t bytes,
                  std::span<const RankPlace> places, int channels, int num_pipe_ops) {
  ncclFunc_t func{};
  if (tuner.context == nullptr || !tunerFunc(kind, &func)) return 0;
  // simgpu's modelled time of the pairs it can tell apart (ring and tree, the simple protocol;
  // tree for all-reduce only, as simgpu's), -1 (NCCL_ALGO_PROTO_IGNORE) elsewhere.
  float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  std::fill(&table[0][0], &table[0][0] + NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS, static_cast<float>(NCCL_ALGO_PROTO_IGNORE));
  CostParams as = cost;
  as.algorithm = Algorithm::Ring;
  table[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = static_cast<float>(collectiveDurationNs(as, kind, bytes, places, channels) / 1e3);
  if (kind == CollKind::AllReduce) {
    as.algorithm = Algorithm::Tree;
    table[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] = static_cast<float>(collectiveDurationNs(as, kind, bytes, places, channels) / 1e3);
  }
  int chosen = 0;
  // As NCCL: the table's rows go as float**; a plugin casts it back to float (*)[NCCL_NUM_PROTOCOLS].
  if (tunerPlugin()->getCollInfo(tuner.context, func, bytes, num_pipe_ops, reinterpret_cast<float**>(table),
                                 NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, 0, &chosen) != ncclSuccess) {
    return 0;  // NCCL falls back to its own choice
  }
  return std::max(chosen, 0);
}

}  // namespace simgpu::nccl

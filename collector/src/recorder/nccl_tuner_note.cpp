#include "syncopate/collector/nccl_tuner_note.hpp"

#include <atomic>
#include <bit>
#include <cstdint>

#include "syncopate/dispatch/tables.hpp"

namespace syncopate::preload {
namespace {

// The row of NCCL's per-generation constants for the current device (its compute capability).
int compcapIndex() noexcept {
  const CudartHelpers* helpers = cudartHelpers();
  int device = 0;
  cudaDeviceProp properties{};
  if (helpers == nullptr || helpers->cudaGetDevice == nullptr || helpers->cudaGetDeviceProperties == nullptr ||
      helpers->cudaGetDevice(&device) != cudaSuccess ||
      helpers->cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    return NCCL_HOPPER_COMPCAP_IDX;
  }
  if (properties.major <= 7) return NCCL_VOLTA_COMPCAP_IDX;
  if (properties.major == 8) return NCCL_AMPERE_COMPCAP_IDX;
  if (properties.major == 9) return NCCL_HOPPER_COMPCAP_IDX;
  return NCCL_BLACKWELL_COMPCAP_IDX;
}

int scaleIndex(std::size_t nodes) noexcept {
  if (nodes <= 1) return NCCL_TUNING_SCALE_1NODE;
  if (nodes == 2) return NCCL_TUNING_SCALE_2NODES;
  return NCCL_TUNING_SCALE_4NODES;
}

// The node count of the communicator whose figure is kept, and that figure (bytes/s, as bits).
std::atomic<std::uint64_t> g_nodes{0};
std::atomic<std::uint64_t> g_bandwidth_bits{0};

}  // namespace

void noteNcclTunerInit(std::size_t nodes, const ncclTunerConstants_v5_t& constants) noexcept {
  const double gbps = constants.perChMaxRingLL128Bws[compcapIndex()][scaleIndex(nodes)];
  if (!(gbps > 0)) return;
  // Communicators are created rarely and on few threads: a compare-and-swap on the node count
  // decides which communicator's figure stays.
  std::uint64_t seen = g_nodes.load(std::memory_order_acquire);
  do {
    if (seen != 0 && nodes <= seen) return;
  } while (!g_nodes.compare_exchange_weak(seen, nodes, std::memory_order_acq_rel));
  g_bandwidth_bits.store(std::bit_cast<std::uint64_t>(gbps * 1e9), std::memory_order_release);
}

NcclChannelBandwidth notedChannelBandwidth() noexcept {
  NcclChannelBandwidth noted;
  noted.bytes_per_second = std::bit_cast<double>(g_bandwidth_bits.load(std::memory_order_acquire));
  noted.nodes = static_cast<std::size_t>(g_nodes.load(std::memory_order_acquire));
  return noted;
}

}  // namespace syncopate::preload

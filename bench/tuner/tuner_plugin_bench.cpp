// What the preload library's NCCL tuner plugin adds to each collective NCCL launches (its
// getCollInfo: docs/collector.md, "NCCL's tuner plugin"), timed as NCCL calls it: the library
// loaded as NCCL loads a plugin (dlopen of the path, `ncclTunerPlugin_v5`), init once, then
// getCollInfo for collectives of several sizes. With SYNCOPATE_PLAN naming a plan the plan's
// rules answer; without, the plugin leaves NCCL's choice. With --plan the benchmark writes a plan
// of channel counts (all-reduces of 1-64 MiB on 4 channels) and names it in SYNCOPATE_PLAN before
// loading the library. Prints one line:
//   tuner_plugin_bench plan=yes|no calls=N ns_per_call=X channels_set=K
// Usage: tuner_plugin_bench LIBSYNCOPATE_PRELOAD CALLS [--plan]
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "syncopate/plugin_abi/nccl_tuner_v5.h"
#include "syncopate/tuner/plan.hpp"

namespace {

// A plan of channel counts alone, written by the tuner's own code (its checksum must hold).
bool writeChannelPlan(const std::filesystem::path& file) {
  syncopate::tuner::Plan plan;
  plan.ranks = 4;
  plan.channels = {{syncopate::trace::CollType::AllReduce, 1 << 20, 64 << 20, 4}};
  return syncopate::tuner::writePlan(plan, file).ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s LIBSYNCOPATE_PRELOAD CALLS [--plan]\n", argv[0]);
    return 2;
  }
  const long calls = std::atol(argv[2]);
  const bool with_plan = argc > 3 && std::string_view(argv[3]) == "--plan";
  const std::filesystem::path plan_file =
      std::filesystem::temp_directory_path() / ("tuner_plugin_bench-" + std::to_string(getpid()) + ".json");
  if (with_plan) {
    if (!writeChannelPlan(plan_file)) return 1;
    setenv("SYNCOPATE_PLAN", plan_file.c_str(), 1);
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "tuner_plugin_bench: cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  const auto* tuner = static_cast<const ncclTuner_v5_t*>(dlsym(library, "ncclTunerPlugin_v5"));
  if (tuner == nullptr || tuner->init == nullptr || tuner->getCollInfo == nullptr) {
    std::fprintf(stderr, "tuner_plugin_bench: %s exports no complete ncclTunerPlugin_v5\n", argv[1]);
    return 1;
  }
  ncclTunerConstants_v5_t constants{};
  constants.perChMaxRingLL128Bws[NCCL_HOPPER_COMPCAP_IDX][NCCL_TUNING_SCALE_4NODES] = 12.5;
  ncclNvlDomainInfo_v5_t domains{4, 1, 1};
  void* context = nullptr;
  if (tuner->init(&context, 42, 4, 4, nullptr, &domains, &constants) != ncclSuccess) return 1;
  float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] = {};
  float* rows[NCCL_NUM_ALGORITHMS];
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; ++a) rows[a] = table[a];
  long channels_set = 0;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) {
    int channels = 0;
    // Sizes from 4 KiB to 64 MiB, all-reduces and all-gathers, as a step launches them.
    const size_t bytes = size_t{4096} << (i % 15);
    const ncclFunc_t func = (i & 1) != 0 ? ncclFuncAllReduce : ncclFuncAllGather;
    tuner->getCollInfo(context, func, bytes, 1, rows, NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, 0, &channels);
    channels_set += channels > 0 ? 1 : 0;
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  tuner->finalize(context);
  std::filesystem::remove(plan_file);
  std::printf("tuner_plugin_bench plan=%s calls=%ld ns_per_call=%.2f channels_set=%ld\n", with_plan ? "yes" : "no", calls,
              ns / static_cast<double>(calls), channels_set);
  return 0;
}

// The added cost per launch of learning what it touches, with the layout already learnt (every
// launch after a kernel's first): one acquire load of the kernel's cached layout, then the scan.
// The process holds the allocations a PyTorch job has: a caching allocator's segments (64 of
// 2 MiB, and 1024 for a large job), so that a word's lookup is a real binary search.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "syncopate/dispatch/device_memory.hpp"
#include "syncopate/dispatch/launch_touches.hpp"

namespace syncopate::preload {
namespace {

constexpr std::uint64_t kBase = 0x7f0000000000;
constexpr std::uint64_t kSegmentBytes = 2u << 20;

void holdSegments(std::int64_t segments) {
  static std::int64_t held = 0;
  for (; held < segments; ++held) deviceMemory().add(kBase + static_cast<std::uint64_t>(held) * 2 * kSegmentBytes, kSegmentBytes);
}

std::uint64_t tensor(int i) { return kBase + static_cast<std::uint64_t>(i % 64) * 2 * kSegmentBytes + 4096u * static_cast<std::uint64_t>(i); }

// elementwise(float* out, const float* a, const float* b, int n, float alpha)
void PointerParameters(benchmark::State& state) {
  holdSegments(state.range(0));
  static const std::vector<ParamSlot> slots = {{0, 8, ParamKind::Pointer},
                                               {8, 8, ParamKind::Pointer},
                                               {16, 8, ParamKind::Pointer},
                                               {24, 4, ParamKind::Scalar},
                                               {28, 4, ParamKind::Scalar}};
  static const ParamLayout layout{true, 5, 32, false, slots.data()};
  std::atomic<const ParamLayout*> cached{&layout};
  std::uint64_t out = tensor(1), a = tensor(2), b = tensor(3);
  int n = 1 << 20;
  float alpha = 0.5f;
  void* args[] = {&out, &a, &b, &n, &alpha};
  LaunchTouch touches[kMaxLaunchTouches];
  for (auto _ : state) {
    benchmark::DoNotOptimize(touchesOf(*cached.load(std::memory_order_acquire), args, nullptr, touches));
  }
}

// multi_tensor_apply(int chunk, TensorListMetadata lists, Op op): 4 KB by value holding 3 lists
// of 36 tensor pointers, their sizes, and block-to-tensor tables, as PyTorch's optimizer kernels.
void FourKilobyteStruct(benchmark::State& state) {
  holdSegments(state.range(0));
  struct Lists {
    std::uint64_t addresses[3][36];
    std::int64_t sizes[36];
    unsigned char block_to_tensor[320];
    int block_to_chunk[320];
    int start_tensor;
    unsigned char pad[4096 - 3 * 36 * 8 - 36 * 8 - 320 - 320 * 4 - 4];
  } lists{};
  static_assert(sizeof(Lists) == 4096);
  for (int list = 0; list < 3; ++list) {
    for (int t = 0; t < 36; ++t) lists.addresses[list][t] = tensor(list * 36 + t);
  }
  for (int t = 0; t < 36; ++t) lists.sizes[t] = 65536 + t;
  static const std::vector<ParamSlot> slots = {{0, 4, ParamKind::Scalar}, {8, 4096, ParamKind::Scanned}, {4104, 1, ParamKind::Scanned}};
  static const ParamLayout layout{true, 3, 4105, true, slots.data()};
  std::atomic<const ParamLayout*> cached{&layout};
  int chunk = 65536;
  char op = 0;
  void* args[] = {&chunk, &lists, &op};
  LaunchTouch touches[kMaxLaunchTouches];
  for (auto _ : state) {
    benchmark::DoNotOptimize(touchesOf(*cached.load(std::memory_order_acquire), args, nullptr, touches));
  }
  state.counters["touches"] = touchesOf(layout, args, nullptr, touches);
}

BENCHMARK(PointerParameters)->Arg(64)->Arg(1024);
BENCHMARK(FourKilobyteStruct)->Arg(64)->Arg(1024);

}  // namespace
}  // namespace syncopate::preload

BENCHMARK_MAIN();

// The collector's cost per intercepted call, and the event rate it sustains without dropping:
// threads issue kernel launches (cudaLaunchKernel) or async copies as fast as they can, each
// call timed on its own (CLOCK_MONOTONIC around the call), on whatever CUDA runtime is on the
// library path and with whatever collector configuration the environment sets up.
//   collector_launch_bench [--calls N] [--threads T] [--api launch|memcpy] [--rate CALLS_PER_S]
//                          [--sync-every N] [--kernel empty|elementwise] [--timing-floor]
// (--rate paces each thread to that many calls per second in bursts of 256, for the
// sustained-rate figure; --sync-every waits for the stream, untimed, after every N calls: on a
// real GPU a launch queue that fills makes a call wait for the GPU, which is not the host's cost;
// --kernel elementwise launches a kernel with an elementwise operation's parameters, three
// pointers and two numbers, whose touches the collector records, instead of one without any;
// --timing-floor does around each launch, in the benchmark itself, the least that timing a
// launch with CUDA events takes, whoever does it: the host clock read before and after (the
// processor's counter, as the collector reads it), an event recorded on the stream before and
// after, and the two readings written to memory. Run without a collector, its added cost is the
// part of a recorded launch's cost that no collector using events can avoid).
// prints:
//   launch_bench api=launch threads=T calls=N median_ns=… p99_ns=… timer_ns=… mean_ns=… timer_mean_ns=…
//                calls_per_s=… collector=active|absent recording=… records_dropped=… ops_untimed=…
// timer_ns is the timer's own cost, measured as the calls are (two readings with nothing
// between them, the median of as many samples as there are calls): median_ns - timer_ns is
// what the call itself costs, in every configuration alike. mean_ns and timer_mean_ns are the
// means of the middle 90% of the same samples, which resolve less than the clock's step.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "syncopate/collector/preload.h"

namespace {

std::int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

__global__ void bench_kernel() {}
__global__ void bench_elementwise(float* /*out*/, const float* /*a*/, const float* /*b*/, int /*n*/, float /*alpha*/) {}

struct Options {
  long calls = 200000;
  int threads = 1;
  bool memcpy = false;
  double rate = 0.0;  // per thread; 0: as fast as possible
  long sync_every = 0;  // 0: never
  bool elementwise = false;
  bool timing_floor = false;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; i += 2) {
    std::string arg = argv[i];
    if (arg == "--timing-floor") {
      options.timing_floor = true;
      --i;  // a flag: no value follows
      continue;
    }
    if (i + 1 == argc) {
      std::fprintf(stderr, "collector_launch_bench: %s needs a value\n", arg.c_str());
      std::exit(2);
    }
    if (arg == "--calls") options.calls = std::atol(argv[i + 1]);
    else if (arg == "--threads") options.threads = std::atoi(argv[i + 1]);
    else if (arg == "--api") options.memcpy = std::string(argv[i + 1]) == "memcpy";
    else if (arg == "--rate") options.rate = std::atof(argv[i + 1]);
    else if (arg == "--sync-every") options.sync_every = std::atol(argv[i + 1]);
    else if (arg == "--kernel") {
      const std::string kernel = argv[i + 1];
      if (kernel != "empty" && kernel != "elementwise") {
        std::fprintf(stderr, "collector_launch_bench: --kernel takes empty or elementwise, not %s\n", kernel.c_str());
        std::exit(2);
      }
      options.elementwise = kernel == "elementwise";
    } else {
      std::fprintf(stderr, "collector_launch_bench: unknown option %s\n", arg.c_str());
      std::exit(2);
    }
  }
  return options;
}

// The host clock as a collector reads it in its hot path: the processor's counter where there
// is one, else the system's clock.
std::uint64_t hostCounter() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(nowNs());
#endif
}

// The timing floor's events, a pair per launch in flight, taken in turn.
struct FloorEvents {
  static constexpr std::size_t kPairs = 1024;
  std::vector<cudaEvent_t> events;
  std::vector<std::uint64_t> readings;  // two a launch, as a collector keeps them

  explicit FloorEvents(const Options& options) {
    if (!options.timing_floor) return;
    events.resize(2 * kPairs);
    for (auto& event : events) {
      if (cudaEventCreateWithFlags(&event, cudaEventDefault) != cudaSuccess) {
        std::fprintf(stderr, "collector_launch_bench: cudaEventCreateWithFlags failed for the timing floor\n");
        std::exit(1);
      }
    }
    readings.resize(2 * static_cast<std::size_t>(options.calls));
  }
  ~FloorEvents() {
    // The readings are kept, as a collector's are: the compiler may not leave their stores out.
    asm volatile("" : : "r"(readings.data()) : "memory");
    for (cudaEvent_t event : events) cudaEventDestroy(event);
  }
  static void recorded(cudaError_t result) {
    if (result == cudaSuccess) return;
    std::fprintf(stderr, "collector_launch_bench: cudaEventRecord failed (%d) for the timing floor\n", static_cast<int>(result));
    std::exit(1);
  }
};

void issue(const Options& options, cudaStream_t stream, std::vector<std::int64_t>* samples) {
  FloorEvents floor(options);
  static char host[64];
  static char device[64];
  void* args[1] = {nullptr};
  // The elementwise kernel's arguments: three buffers of device memory and two numbers.
  float* buffers[3] = {nullptr, nullptr, nullptr};
  int n = 256;
  float alpha = 2.0f;
  if (options.elementwise) {
    for (float*& buffer : buffers) {
      if (cudaMalloc(reinterpret_cast<void**>(&buffer), n * sizeof(float)) != cudaSuccess) {
        std::fprintf(stderr, "collector_launch_bench: cudaMalloc failed for the elementwise kernel's buffers\n");
        std::exit(1);
      }
    }
  }
  void* elementwise_args[5] = {&buffers[0], &buffers[1], &buffers[2], &n, &alpha};
  const void* kernel = options.elementwise ? reinterpret_cast<const void*>(&bench_elementwise)
                                           : reinterpret_cast<const void*>(&bench_kernel);
  void** kernel_args = options.elementwise ? elementwise_args : args;
  const std::int64_t begin = nowNs();
  for (long i = 0; i < options.calls; ++i) {
    if (options.rate > 0 && i % 256 == 0) {
      // Paced in bursts of 256 calls, sleeping until each burst is due: the core is free in
      // between, as it is when a training step waits for its GPU.
      const auto due = begin + static_cast<std::int64_t>(static_cast<double>(i) * 1e9 / options.rate);
      const std::int64_t wait = due - nowNs();
      if (wait > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
    }
    if (options.sync_every > 0 && i > 0 && i % options.sync_every == 0) cudaStreamSynchronize(stream);
    const std::size_t pair = 2 * (static_cast<std::size_t>(i) % FloorEvents::kPairs);
    std::int64_t start = samples != nullptr ? nowNs() : 0;
    if (options.timing_floor) {
      floor.readings[2 * static_cast<std::size_t>(i)] = hostCounter();
      floor.recorded(cudaEventRecord(floor.events[pair], stream));
    }
    cudaError_t error = options.memcpy
                            ? cudaMemcpyAsync(device, host, sizeof host, cudaMemcpyHostToDevice, stream)
                            : cudaLaunchKernel(kernel, dim3(1), dim3(32), kernel_args, 0, stream);
    if (options.timing_floor) {
      floor.recorded(cudaEventRecord(floor.events[pair + 1], stream));
      floor.readings[2 * static_cast<std::size_t>(i) + 1] = hostCounter();
    }
    if (samples != nullptr) (*samples)[static_cast<std::size_t>(i)] = nowNs() - start;
    if (error != cudaSuccess) {
      std::fprintf(stderr, "collector_launch_bench: call failed (%d)\n", static_cast<int>(error));
      std::exit(1);
    }
  }
}

// The mean of the middle 90% of sorted samples (the 5% at each end left out: page faults,
// preemptions). The clock reads in steps (10 ns on some machines), so medians move in those
// steps; the mean of many readings resolves what lies between them.
double middleMean(const std::vector<std::int64_t>& sorted) {
  const std::size_t from = sorted.size() / 20, to = sorted.size() - sorted.size() / 20;
  double sum = 0;
  for (std::size_t i = from; i < to; ++i) sum += static_cast<double>(sorted[i]);
  return to > from ? sum / static_cast<double>(to - from) : 0.0;
}

struct TimerCost {
  std::int64_t median = 0;
  double middle_mean = 0;
};

// Intervals between two back-to-back readings of the timer, `samples` of them.
TimerCost timerCost(long samples) {
  std::vector<std::int64_t> empty(static_cast<std::size_t>(samples));
  for (auto& sample : empty) {
    const std::int64_t start = nowNs();
    sample = nowNs() - start;
  }
  std::sort(empty.begin(), empty.end());
  return {empty[static_cast<std::size_t>(samples / 2)], middleMean(empty)};
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  std::vector<cudaStream_t> streams(static_cast<std::size_t>(options.threads));
  for (auto& stream : streams) cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  // A job launches its kernels long after its first CUDA call (start-up, the model's
  // construction); the collector's clock is calibrated in its first 10-15 ms (docs/collector.md,
  // "The host clock"), so the measured calls come after as long.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::vector<std::int64_t> samples(static_cast<std::size_t>(options.calls));
  const std::int64_t start = nowNs();
  std::vector<std::thread> others;
  for (int t = 1; t < options.threads; ++t) others.emplace_back(issue, options, streams[static_cast<std::size_t>(t)], nullptr);
  issue(options, streams[0], &samples);
  for (auto& thread : others) thread.join();
  const std::int64_t elapsed = nowNs() - start;
  cudaDeviceSynchronize();

  std::sort(samples.begin(), samples.end());
  const std::int64_t median = samples[samples.size() / 2];
  const std::int64_t p99 = samples[samples.size() * 99 / 100];
  const double rate = static_cast<double>(options.calls) * options.threads * 1e9 / static_cast<double>(elapsed);
  const double mean = middleMean(samples);
  const TimerCost timer = timerCost(options.calls);

  // What the collector says about itself, when it is there.
  syncopate_preload_status_v1 status{};
  status.struct_size = sizeof status;
  bool active = false;
  using GetInterface = int (*)(uint32_t, const void**);
  if (auto get = reinterpret_cast<GetInterface>(dlsym(RTLD_DEFAULT, "syncopate_preload_get_interface"))) {
    const syncopate_preload_interface_v1* api = nullptr;
    if (get(1, reinterpret_cast<const void**>(&api)) == 0 && api->get_status(&status) == 0) active = status.active != 0;
  }
  std::printf(
      "launch_bench api=%s threads=%d calls=%ld median_ns=%lld p99_ns=%lld timer_ns=%lld mean_ns=%.1f "
      "timer_mean_ns=%.1f calls_per_s=%.0f collector=%s recording=%d records_dropped=%llu ops_untimed=%llu\n",
      options.memcpy ? "memcpy" : "launch", options.threads, options.calls, static_cast<long long>(median),
      static_cast<long long>(p99), static_cast<long long>(timer.median), mean, timer.middle_mean, rate,
      active ? "active" : "absent", status.recording,
      static_cast<unsigned long long>(status.records_dropped), static_cast<unsigned long long>(status.ops_untimed));
  return 0;
}

#include "timing/cupti_timing.hpp"

#include <dlfcn.h>

// cupti.h itself does not build next to cuda.h without its renames (see common/cuda_headers.hpp).
#include <cupti_activity.h>
#include <cupti_result.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/clock.hpp"
#include "syncopate/dispatch/log.hpp"

namespace syncopate::preload {
namespace {

constexpr std::size_t kBufferBytes = 4u << 20;
constexpr std::size_t kBufferAlignment = 8;
// A ticket whose activity has not arrived this long after it was first asked for is given up
// (an op that launched nothing, or a record CUPTI dropped): counted, not waited on forever.
constexpr std::int64_t kGiveUpNs = 15'000'000'000;
constexpr std::int64_t kFlushIntervalNs = 20'000'000;
constexpr std::int64_t kForgetNs = 60'000'000'000;

// The CUPTI functions used, resolved from the loaded library.
struct CuptiApi {
  void* library = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) registerCallbacks = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) registerTimestampCallback = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flushAll = nullptr;
  decltype(&cuptiActivityGetNextRecord) nextRecord = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop = nullptr;
  decltype(&cuptiGetResultString) resultString = nullptr;
};

std::string resultText(const CuptiApi& api, CUptiResult result) {
  const char* text = nullptr;
  if (api.resultString != nullptr) api.resultString(result, &text);
  return text != nullptr ? text : "CUPTI error " + std::to_string(static_cast<int>(result));
}

std::uint64_t CUPTIAPI monotonicTimestamp() { return static_cast<std::uint64_t>(monotonicNs()); }

// Where libcupti.so.13 may be: the library path first (simgpu's drop-in in tests), then what
// `syncopate record` found, then the toolkit's usual places.
void* loadCupti(std::string& why) {
  const char* candidates[] = {"libcupti.so.13", std::getenv("SYNCOPATE_CUPTI_LIBRARY"),
                              "/usr/local/cuda/lib64/libcupti.so.13",
                              "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"};
  for (const char* candidate : candidates) {
    if (candidate == nullptr || *candidate == '\0') continue;
    if (void* library = dlopen(candidate, RTLD_NOW | RTLD_LOCAL)) return library;
  }
  const char* error = dlerror();
  why = std::string("libcupti.so.13 could not be loaded") + (error != nullptr ? std::string(" (") + error + ")" : "");
  return nullptr;
}

}  // namespace

struct CuptiTiming::Impl {
  CuptiApi api;

  // Filled by CUPTI's buffer callbacks (its own thread, or the caller of a flush), read by
  // the background thread: a mutex, off the hot path.
  std::mutex mutex;
  struct Interval {
    std::int64_t start = 0;
    std::int64_t end = 0;
  };
  // Every entry carries when it was made: what nobody claims within kForgetNs is swept
  // (activities of calls the recorder did not ask about, late activities of a released ticket).
  struct External {
    Ticket ticket;
    std::int64_t made_ns;
  };
  struct Waiting {
    std::vector<Interval> intervals;
    std::int64_t made_ns;
  };
  struct Done {
    Interval interval;
    std::int64_t made_ns;
  };
  std::unordered_map<std::uint32_t, External> external_of;  // CUPTI correlation -> ticket
  std::unordered_map<std::uint32_t, Waiting> unjoined;      // activities before their correlation
  std::unordered_map<Ticket, Done> done;                    // ticket -> GPU interval
  std::unordered_map<Ticket, int> references;               // extra references of shared tickets
  std::unordered_map<Ticket, std::int64_t> first_asked;
  std::int64_t next_flush_ns = 0;
  std::int64_t next_sweep_ns = 0;

  void addActivity(std::uint32_t correlation, std::int64_t start, std::int64_t end) {
    auto external = external_of.find(correlation);
    if (external == external_of.end()) {
      auto [waiting, inserted] = unjoined.try_emplace(correlation, Waiting{{}, monotonicNs()});
      waiting->second.intervals.push_back({start, end});
      return;
    }
    merge(external->second.ticket, {start, end});
  }
  void merge(Ticket ticket, Interval interval) {
    // Several activities under one ticket (the kernels an NCCL group launches): their span.
    auto [entry, inserted] = done.try_emplace(ticket, Done{interval, monotonicNs()});
    if (!inserted) {
      entry->second.interval.start = std::min(entry->second.interval.start, interval.start);
      entry->second.interval.end = std::max(entry->second.interval.end, interval.end);
    }
  }
  void addExternal(std::uint32_t correlation, std::uint64_t ticket) {
    external_of[correlation] = External{ticket, monotonicNs()};
    auto waiting = unjoined.find(correlation);
    if (waiting == unjoined.end()) return;
    for (const Interval& interval : waiting->second.intervals) merge(ticket, interval);
    unjoined.erase(waiting);
  }
  void sweep(std::int64_t now) {
    std::erase_if(external_of, [now](const auto& entry) { return now - entry.second.made_ns > kForgetNs; });
    std::erase_if(unjoined, [now](const auto& entry) { return now - entry.second.made_ns > kForgetNs; });
    std::erase_if(done, [now](const auto& entry) { return now - entry.second.made_ns > kForgetNs; });
  }

  void consume(std::uint8_t* buffer, std::size_t valid) {
    std::lock_guard lock(mutex);
    CUpti_Activity* record = nullptr;
    while (api.nextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
          auto* external = reinterpret_cast<CUpti_ActivityExternalCorrelation*>(record);
          if (external->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
            addExternal(external->correlationId, external->externalId);
          }
          break;
        }
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          auto* kernel = reinterpret_cast<CUpti_ActivityKernel10*>(record);
          addActivity(kernel->correlationId, static_cast<std::int64_t>(kernel->start), static_cast<std::int64_t>(kernel->end));
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          auto* copy = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
          addActivity(copy->correlationId, static_cast<std::int64_t>(copy->start), static_cast<std::int64_t>(copy->end));
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          auto* fill = reinterpret_cast<CUpti_ActivityMemset4*>(record);
          addActivity(fill->correlationId, static_cast<std::int64_t>(fill->start), static_cast<std::int64_t>(fill->end));
          break;
        }
        default: break;  // API records: only their external correlations matter
      }
    }
  }
};

namespace {

// CUPTI's callbacks are plain functions: they reach the one backend of the process here.
CuptiTiming::Impl* activeImpl = nullptr;

void CUPTIAPI bufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  if (activeImpl != nullptr && buffer != nullptr && valid > 0) {
    try {
      activeImpl->consume(buffer, valid);
    } catch (...) {
      log(LogLevel::Warn, "out of memory while reading CUPTI records; some ops stay untimed");
    }
  }
  std::free(buffer);
}

}  // namespace

std::unique_ptr<CuptiTiming> CuptiTiming::create(std::string& why) noexcept {
  try {
    auto impl = std::make_unique<Impl>();
    CuptiApi& api = impl->api;
    api.library = loadCupti(why);
    if (api.library == nullptr) return nullptr;
    auto resolve = [&](auto& function, const char* symbol) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(api.library, symbol));
      return function != nullptr;
    };
    if (!resolve(api.registerCallbacks, "cuptiActivityRegisterCallbacks") ||
        !resolve(api.registerTimestampCallback, "cuptiActivityRegisterTimestampCallback") ||
        !resolve(api.enable, "cuptiActivityEnable") || !resolve(api.disable, "cuptiActivityDisable") ||
        !resolve(api.flushAll, "cuptiActivityFlushAll") || !resolve(api.nextRecord, "cuptiActivityGetNextRecord") ||
        !resolve(api.push, "cuptiActivityPushExternalCorrelationId") ||
        !resolve(api.pop, "cuptiActivityPopExternalCorrelationId")) {
      why = "the loaded libcupti.so.13 lacks part of the activity API";
      return nullptr;
    }
    resolve(api.resultString, "cuptiGetResultString");
    activeImpl = impl.get();
    // The clock first: every record must carry CLOCK_MONOTONIC times. CUPTI writes external
    // correlation records only for API activity records, so API activity is wanted too; a
    // CUPTI that correlates without it (simgpu's) may refuse those kinds.
    const CUpti_ActivityKind required[] = {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                           CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
    const CUpti_ActivityKind wanted[] = {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};
    CUptiResult result = api.registerTimestampCallback(monotonicTimestamp);
    if (result == CUPTI_SUCCESS) result = api.registerCallbacks(bufferRequested, bufferCompleted);
    for (std::size_t i = 0; result == CUPTI_SUCCESS && i < std::size(required); ++i) result = api.enable(required[i]);
    if (result != CUPTI_SUCCESS) {
      why = "CUPTI could not be enabled (" + resultText(api, result) + "; is another profiler attached?)";
      for (CUpti_ActivityKind kind : required) api.disable(kind);
      activeImpl = nullptr;
      return nullptr;
    }
    for (CUpti_ActivityKind kind : wanted) api.enable(kind);
    return std::unique_ptr<CuptiTiming>(new CuptiTiming(std::move(impl)));
  } catch (...) {
    why = "out of memory while setting up CUPTI";
    activeImpl = nullptr;
    return nullptr;
  }
}

CuptiTiming::CuptiTiming(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}

CuptiTiming::~CuptiTiming() = default;

Ticket CuptiTiming::begin(int, cudaStream_t, std::uint32_t correlation) noexcept {
  return impl_->api.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, correlation) == CUPTI_SUCCESS ? correlation : kNoTicket;
}

bool CuptiTiming::end(Ticket, cudaStream_t, bool issued) noexcept {
  std::uint64_t popped = 0;
  impl_->api.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped);
  return issued;
}

void CuptiTiming::share(Ticket ticket, int extra_references) noexcept {
  try {
    std::lock_guard lock(impl_->mutex);
    impl_->references[ticket] += extra_references;
  } catch (...) {
  }
}

void CuptiTiming::collect() noexcept {
  std::int64_t now = monotonicNs();
  if (now < impl_->next_flush_ns) return;
  impl_->next_flush_ns = now + kFlushIntervalNs;
  impl_->api.flushAll(0);
  if (now >= impl_->next_sweep_ns) {
    impl_->next_sweep_ns = now + kForgetNs / 4;
    try {
      std::lock_guard lock(impl_->mutex);
      impl_->sweep(now);
    } catch (...) {
    }
  }
}

Resolution CuptiTiming::resolve(Ticket ticket, std::int64_t& start_ns, std::int64_t& end_ns) noexcept {
  try {
    std::lock_guard lock(impl_->mutex);
    if (auto found = impl_->done.find(ticket); found != impl_->done.end()) {
      start_ns = found->second.interval.start;
      end_ns = found->second.interval.end;
      impl_->first_asked.erase(ticket);
      return Resolution::Resolved;
    }
    std::int64_t now = monotonicNs();
    auto [asked, inserted] = impl_->first_asked.try_emplace(ticket, now);
    if (!inserted && now - asked->second > kGiveUpNs) {
      impl_->first_asked.erase(asked);
      return Resolution::Failed;
    }
    return Resolution::Pending;
  } catch (...) {
    return Resolution::Pending;
  }
}

void CuptiTiming::release(Ticket ticket) noexcept {
  try {
    std::lock_guard lock(impl_->mutex);
    auto shared = impl_->references.find(ticket);
    if (shared != impl_->references.end() && shared->second > 0) {
      --shared->second;
      return;
    }
    if (shared != impl_->references.end()) impl_->references.erase(shared);
    impl_->done.erase(ticket);
    impl_->first_asked.erase(ticket);
  } catch (...) {
  }
}

void CuptiTiming::drain(std::int64_t deadline_ns) noexcept {
  // Completed activities first; then whatever CUPTI still holds, forced out.
  for (int round = 0; round < 20 && monotonicNs() < deadline_ns; ++round) {
    impl_->api.flushAll(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  impl_->api.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

}  // namespace syncopate::preload

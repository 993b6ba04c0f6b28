#include "timing/cupti_timing.hpp"

#include <dlfcn.h>

// cupti.h itself does not build next to cuda.h without its renames (see common/cuda_headers.hpp).
#include <cupti_activity.h>
#include <cupti_result.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "common/clock.hpp"
#include "syncopate/collector/cupti_tickets.hpp"
#include "syncopate/dispatch/log.hpp"

namespace syncopate::preload {
namespace {

constexpr std::size_t kBufferBytes = 4u << 20;
constexpr std::size_t kBufferAlignment = 8;
constexpr std::int64_t kFlushIntervalNs = 20'000'000;
constexpr std::int64_t kSweepIntervalNs = 1'000'000'000;  // joins of released tickets forgotten this often

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

// The activity kinds collected: the clock first registered, every record carries
// CLOCK_MONOTONIC times. CUPTI writes external correlation records only for API activity records,
// so API activity is wanted too; a CUPTI that correlates without it (simgpu's) may refuse those
// kinds.
constexpr CUpti_ActivityKind kRequiredKinds[] = {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                                 CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                 CUPTI_ACTIVITY_KIND_MEMSET};
constexpr CUpti_ActivityKind kWantedKinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

// Enables the kinds: the required ones or none (what was enabled is disabled again on failure).
CUptiResult enableKinds(const CuptiApi& api) noexcept {
  CUptiResult result = CUPTI_SUCCESS;
  for (std::size_t i = 0; result == CUPTI_SUCCESS && i < std::size(kRequiredKinds); ++i) result = api.enable(kRequiredKinds[i]);
  if (result != CUPTI_SUCCESS) {
    for (CUpti_ActivityKind kind : kRequiredKinds) api.disable(kind);
    return result;
  }
  for (CUpti_ActivityKind kind : kWantedKinds) api.enable(kind);
  return CUPTI_SUCCESS;
}

}  // namespace

struct CuptiTiming::Impl {
  CuptiApi api;
  std::atomic<bool> collecting{true};  // read by issuing threads: no ticket while it is off
  CuptiTickets tickets{&monotonicNs};
  std::int64_t next_flush_ns = 0;
  std::int64_t next_sweep_ns = 0;
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
      activeImpl->tickets.consume(buffer, valid, activeImpl->api.nextRecord);
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
    CUptiResult result = api.registerTimestampCallback(monotonicTimestamp);
    if (result == CUPTI_SUCCESS) result = api.registerCallbacks(bufferRequested, bufferCompleted);
    if (result == CUPTI_SUCCESS) result = enableKinds(api);
    if (result != CUPTI_SUCCESS) {
      why = "CUPTI could not be enabled (" + resultText(api, result) + "; is another profiler attached?)";
      activeImpl = nullptr;
      return nullptr;
    }
    return std::unique_ptr<CuptiTiming>(new CuptiTiming(std::move(impl)));
  } catch (...) {
    why = "out of memory while setting up CUPTI";
    activeImpl = nullptr;
    return nullptr;
  }
}

CuptiTiming::CuptiTiming(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}

CuptiTiming::~CuptiTiming() = default;

namespace {

// The tickets this thread has pushed as CUPTI's external id, innermost last. CUPTI's external id
// is the thread's, not a stream's: the brackets of one NCCL group (one per stream it launches on,
// all around one ncclGroupEnd, under one correlation) share one ticket, pushed once. A call
// bracketed inside another's, were there one, would get its own (four deep at most).
struct Bracket {
  std::uint32_t correlation;
  Ticket ticket;
  int depth;
};
struct OpenBrackets {
  static constexpr int kMax = 4;
  Bracket open[kMax];
  int count;
};
[[gnu::tls_model("initial-exec")]] constinit thread_local OpenBrackets openBrackets{};

}  // namespace

Ticket CuptiTiming::begin(int, cudaStream_t, std::uint32_t correlation) noexcept {
  OpenBrackets& brackets = openBrackets;
  if (brackets.count > 0) {
    Bracket& innermost = brackets.open[brackets.count - 1];
    if (innermost.correlation == correlation) {
      ++innermost.depth;
      return innermost.ticket;
    }
  }
  if (brackets.count == OpenBrackets::kMax || !impl_->collecting.load(std::memory_order_acquire)) return kNoTicket;
  const Ticket ticket = impl_->tickets.open();
  if (ticket == kNoTicket) return kNoTicket;
  if (impl_->api.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, ticket) != CUPTI_SUCCESS) {
    impl_->tickets.release(ticket);
    return kNoTicket;
  }
  brackets.open[brackets.count++] = {correlation, ticket, 1};
  return ticket;
}

bool CuptiTiming::end(Ticket ticket, cudaStream_t, bool issued) noexcept {
  OpenBrackets& brackets = openBrackets;
  if (--brackets.open[brackets.count - 1].depth > 0) return issued;
  --brackets.count;
  std::uint64_t popped = 0;
  impl_->api.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped);
  // A call that failed issued nothing: nobody will ask for its ticket.
  if (!issued) impl_->tickets.release(ticket);
  return issued;
}

bool CuptiTiming::setCollecting(bool collecting) noexcept {
  if (collecting == impl_->collecting.load(std::memory_order_relaxed)) return true;
  if (!collecting) {
    impl_->collecting.store(false, std::memory_order_release);
    for (CUpti_ActivityKind kind : kRequiredKinds) impl_->api.disable(kind);
    for (CUpti_ActivityKind kind : kWantedKinds) impl_->api.disable(kind);
    return true;
  }
  if (const CUptiResult result = enableKinds(impl_->api); result != CUPTI_SUCCESS) {
    log(LogLevel::Warn, "CUPTI could not be enabled again (%s): what is recorded now goes untimed (counted)",
        resultText(impl_->api, result).c_str());
    return false;
  }
  impl_->collecting.store(true, std::memory_order_release);
  return true;
}

void CuptiTiming::share(Ticket ticket, int extra_references) noexcept {
  impl_->tickets.share(ticket, extra_references);
}

void CuptiTiming::collect() noexcept {
  const std::int64_t now = monotonicNs();
  if (now < impl_->next_flush_ns) return;
  impl_->next_flush_ns = now + kFlushIntervalNs;
  impl_->api.flushAll(0);
  if (now >= impl_->next_sweep_ns) {
    impl_->next_sweep_ns = now + kSweepIntervalNs;
    try {
      impl_->tickets.sweep();
    } catch (...) {
    }
  }
}

Resolution CuptiTiming::resolve(Ticket ticket, std::int64_t& start_ns, std::int64_t& end_ns) noexcept {
  try {
    return impl_->tickets.resolve(ticket, start_ns, end_ns);
  } catch (...) {
    return Resolution::Pending;
  }
}

void CuptiTiming::release(Ticket ticket) noexcept { impl_->tickets.release(ticket); }

void CuptiTiming::drain(std::int64_t deadline_ns) noexcept {
  // Completed activities first; then whatever CUPTI still holds, forced out.
  for (int round = 0; round < 20 && monotonicNs() < deadline_ns; ++round) {
    impl_->api.flushAll(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  impl_->api.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

}  // namespace syncopate::preload

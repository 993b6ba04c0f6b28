#include "nvtx/nvtx_handlers.hpp"

#include <atomic>
#include <cwchar>
#include <new>
#include <string>
#include <string_view>

#include "common/clock.hpp"
#include "attach/iteration_window.hpp"
#include "recorder/recorder.hpp"

namespace syncopate::preload::nvtx {
namespace {

// What nvtxDomainHandle_t and nvtxStringHandle_t point to: the name, and its interned id in the
// current recorder (generation << 32 | id), made on first use.
struct NamedHandle {
  std::string text;
  std::atomic<std::uint64_t> interned{0};
};

NamedHandle* domainOf(nvtxDomainHandle_t domain) { return reinterpret_cast<NamedHandle*>(domain); }

trace::StringId internedId(Recorder& recorder, NamedHandle* handle) {
  if (handle == nullptr) return trace::kNoString;
  std::uint64_t cached = handle->interned.load(std::memory_order_relaxed);
  if ((cached >> 32) == recorder.generation()) return static_cast<trace::StringId>(cached);
  trace::StringId id = recorder.internName(handle->text);
  handle->interned.store((recorder.generation() << 32) | id, std::memory_order_relaxed);
  return id;
}

// The push/pop level of this thread (kept even before the recorder exists, so that the
// levels NVTX returns are right from the first push).
[[gnu::tls_model("initial-exec")]] constinit thread_local int depth = 0;

// Wide strings are rare; they are converted to UTF-8 into a caller's buffer.
std::string_view utf8(const wchar_t* text, char (&buffer)[512]) {
  std::size_t used = 0;
  for (; text != nullptr && *text != L'\0'; ++text) {
    auto code = static_cast<std::uint32_t>(*text);
    char bytes[4];
    std::size_t n = 0;
    if (code < 0x80) {
      bytes[n++] = static_cast<char>(code);
    } else if (code < 0x800) {
      bytes[n++] = static_cast<char>(0xC0 | (code >> 6));
      bytes[n++] = static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      bytes[n++] = static_cast<char>(0xE0 | (code >> 12));
      bytes[n++] = static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      bytes[n++] = static_cast<char>(0x80 | (code & 0x3F));
    } else {
      bytes[n++] = static_cast<char>(0xF0 | ((code >> 18) & 0x07));
      bytes[n++] = static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      bytes[n++] = static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      bytes[n++] = static_cast<char>(0x80 | (code & 0x3F));
    }
    if (used + n > sizeof buffer) break;
    for (std::size_t i = 0; i < n; ++i) buffer[used++] = bytes[i];
  }
  return {buffer, used};
}

struct Event {
  std::string_view message;
  std::uint32_t color = 0;
  bool has_color = false;
  char buffer[512];
};

void describe(const nvtxEventAttributes_t* attributes, Event& event) {
  if (attributes == nullptr) return;
  if (attributes->colorType == NVTX_COLOR_ARGB) {
    event.color = attributes->color;
    event.has_color = true;
  }
  switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      if (attributes->message.ascii != nullptr) event.message = attributes->message.ascii;
      break;
    case NVTX_MESSAGE_TYPE_UNICODE: event.message = utf8(attributes->message.unicode, event.buffer); break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      if (attributes->message.registered != nullptr) {
        event.message = reinterpret_cast<NamedHandle*>(attributes->message.registered)->text;
      }
      break;
    default: break;
  }
}

// ---- push/pop ------------------------------------------------------------------------------

int push(nvtxDomainHandle_t domain, const Event& event) {
  const int level = depth++;
  Recorder* recorder = Recorder::current();
  if (recorder == nullptr) return level;
  const std::int64_t now = monotonicNs();
  if (IterationWindow* window = recorder->iterationWindow()) window->onRangeStart(event.message, now, *recorder);
  ThreadState* thread = recorder->recording() ? recorder->thread() : recorder->existingThread();
  if (thread == nullptr) return level;
  if (level >= kMaxNvtxDepth) {
    if (recorder->recording()) recorder->counters().nvtx_depth_overflow.fetch_add(1, std::memory_order_relaxed);
    return level;
  }
  NvtxFrame& frame = thread->nvtx[level];
  frame.start_ns = 0;
  if (!recorder->recording()) return level;
  frame.start_ns = now;
  frame.name_id = recorder->internName(event.message);
  frame.domain_id = internedId(*recorder, domainOf(domain));
  frame.color = event.color;
  frame.has_color = event.has_color;
  return level;
}

void pushRecord(Recorder& recorder, ThreadState& thread, const trace::NvtxRecord& record) {
  trace::Record packed = record;
  recorder.push(thread, std::span<const trace::Record>(&packed, 1));
}

int pop() {
  Recorder* recorder = Recorder::current();
  if (depth == 0) {
    if (recorder != nullptr && recorder->recording()) {
      recorder->counters().nvtx_unmatched_pop.fetch_add(1, std::memory_order_relaxed);
    }
    return -1;
  }
  const int level = --depth;
  if (recorder == nullptr || level >= kMaxNvtxDepth) return level;
  ThreadState* thread = recorder->existingThread();
  if (thread == nullptr) return level;
  NvtxFrame& frame = thread->nvtx[level];
  const std::int64_t start = frame.start_ns;
  frame.start_ns = 0;
  // Ranges that began before this recording window (armed runs) are not part of it.
  if (start == 0 || !recorder->recording() || start < recorder->windowStartNs()) return level;
  trace::NvtxRecord record;
  record.depth = static_cast<std::uint16_t>(level);
  record.name_id = frame.name_id;
  record.domain_id = frame.domain_id;
  record.color = frame.color;
  record.flags = frame.has_color ? trace::NvtxRecord::kHasColor : 0;
  record.start_ns = start;
  record.end_ns = monotonicNs();
  pushRecord(*recorder, *thread, record);
  return level;
}

// ---- start/end -----------------------------------------------------------------------------

// Ranges that may end on another thread wait in a fixed table, indexed by their id.
struct OpenRange {
  std::atomic<std::uint64_t> id{0};
  std::int64_t start_ns = 0;
  trace::StringId name_id = trace::kNoString;
  trace::StringId domain_id = trace::kNoString;
  std::uint32_t color = 0;
  bool has_color = false;
};
constexpr std::size_t kOpenRanges = 4096;
constinit OpenRange openRanges[kOpenRanges];
constinit std::atomic<std::uint64_t> nextRangeId{1};

nvtxRangeId_t start(nvtxDomainHandle_t domain, const Event& event) {
  const std::uint64_t id = nextRangeId.fetch_add(1, std::memory_order_relaxed);
  Recorder* recorder = Recorder::current();
  if (recorder == nullptr) return id;
  const std::int64_t now = monotonicNs();
  if (IterationWindow* window = recorder->iterationWindow()) window->onRangeStart(event.message, now, *recorder);
  if (!recorder->recording()) return id;
  OpenRange& range = openRanges[id % kOpenRanges];
  if (range.id.exchange(0, std::memory_order_acq_rel) != 0) {
    recorder->counters().nvtx_start_end_overflow.fetch_add(1, std::memory_order_relaxed);
  }
  range.start_ns = now;
  range.name_id = recorder->internName(event.message);
  range.domain_id = internedId(*recorder, domainOf(domain));
  range.color = event.color;
  range.has_color = event.has_color;
  range.id.store(id, std::memory_order_release);
  return id;
}

void end(nvtxRangeId_t id) {
  OpenRange& range = openRanges[id % kOpenRanges];
  std::uint64_t expected = id;
  if (!range.id.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;  // not recorded
  Recorder* recorder = Recorder::current();
  if (recorder == nullptr || !recorder->recording() || range.start_ns < recorder->windowStartNs()) return;
  ThreadState* thread = recorder->thread();
  if (thread == nullptr) return;
  trace::NvtxRecord record;
  record.name_id = range.name_id;
  record.domain_id = range.domain_id;
  record.color = range.color;
  record.flags = range.has_color ? trace::NvtxRecord::kHasColor : 0;
  record.start_ns = range.start_ns;
  record.end_ns = monotonicNs();
  pushRecord(*recorder, *thread, record);
}

void mark(nvtxDomainHandle_t domain, const Event& event) {
  Recorder* recorder = Recorder::current();
  if (recorder == nullptr || !recorder->recording()) return;
  ThreadState* thread = recorder->thread();
  if (thread == nullptr) return;
  trace::NvtxRecord record;
  record.flags = static_cast<std::uint8_t>(trace::NvtxRecord::kMark | (event.has_color ? trace::NvtxRecord::kHasColor : 0));
  record.name_id = recorder->internName(event.message);
  record.domain_id = internedId(*recorder, domainOf(domain));
  record.color = event.color;
  record.start_ns = record.end_ns = monotonicNs();
  pushRecord(*recorder, *thread, record);
}

Event fromAscii(const char* message) {
  Event event;
  if (message != nullptr) event.message = message;
  return event;
}

Event fromWide(const wchar_t* message) {
  Event event;
  event.message = utf8(message, event.buffer);
  return event;
}

Event fromAttributes(const nvtxEventAttributes_t* attributes) {
  Event event;
  describe(attributes, event);
  return event;
}

NamedHandle* makeHandle(std::string_view text) {
  auto* handle = new (std::nothrow) NamedHandle;
  if (handle == nullptr) return nullptr;
  try {
    handle->text = text;
  } catch (...) {
    delete handle;
    return nullptr;
  }
  return handle;
}

}  // namespace

int rangePushEx(const nvtxEventAttributes_t* attributes) noexcept { return push(nullptr, fromAttributes(attributes)); }
int rangePushA(const char* message) noexcept { return push(nullptr, fromAscii(message)); }
int rangePushW(const wchar_t* message) noexcept { return push(nullptr, fromWide(message)); }
int rangePop() noexcept { return pop(); }
nvtxRangeId_t rangeStartEx(const nvtxEventAttributes_t* attributes) noexcept { return start(nullptr, fromAttributes(attributes)); }
nvtxRangeId_t rangeStartA(const char* message) noexcept { return start(nullptr, fromAscii(message)); }
nvtxRangeId_t rangeStartW(const wchar_t* message) noexcept { return start(nullptr, fromWide(message)); }
void rangeEnd(nvtxRangeId_t id) noexcept { end(id); }
void markEx(const nvtxEventAttributes_t* attributes) noexcept { mark(nullptr, fromAttributes(attributes)); }
void markA(const char* message) noexcept { mark(nullptr, fromAscii(message)); }
void markW(const wchar_t* message) noexcept { mark(nullptr, fromWide(message)); }

void domainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) noexcept {
  mark(domain, fromAttributes(attributes));
}
nvtxRangeId_t domainRangeStartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) noexcept {
  return start(domain, fromAttributes(attributes));
}
void domainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) noexcept { end(id); }
int domainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) noexcept {
  return push(domain, fromAttributes(attributes));
}
int domainRangePop(nvtxDomainHandle_t) noexcept { return pop(); }
nvtxStringHandle_t domainRegisterStringA(nvtxDomainHandle_t, const char* text) noexcept {
  return reinterpret_cast<nvtxStringHandle_t>(makeHandle(text != nullptr ? text : ""));
}
nvtxStringHandle_t domainRegisterStringW(nvtxDomainHandle_t, const wchar_t* text) noexcept {
  char buffer[512];
  return reinterpret_cast<nvtxStringHandle_t>(makeHandle(utf8(text, buffer)));
}
nvtxDomainHandle_t domainCreateA(const char* name) noexcept {
  return reinterpret_cast<nvtxDomainHandle_t>(makeHandle(name != nullptr ? name : ""));
}
nvtxDomainHandle_t domainCreateW(const wchar_t* name) noexcept {
  char buffer[512];
  return reinterpret_cast<nvtxDomainHandle_t>(makeHandle(utf8(name, buffer)));
}
// Handles stay valid: NVTX calls already under way may still use them.
void domainDestroy(nvtxDomainHandle_t) noexcept {}

}  // namespace syncopate::preload::nvtx

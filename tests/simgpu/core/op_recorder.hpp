// Test helper: records every op simgpu completes (through the core's observer hook) and builds
// ops of a given class and modelled duration.
#pragma once

#include <simgpu/core/observer.hpp>
#include <simgpu/core/stream_op.hpp>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace simgpu::testing {

struct RecordedOp {
  std::string name;
  OpKind kind;
  CopyDirection direction;
  int device;
  unsigned long long stream_id;
  TimeNs start_ns;
  TimeNs end_ns;
  std::uint64_t correlation_id;
  std::uint64_t bytes;
  bool abandoned;
  TimeNs duration() const { return end_ns - start_ns; }
};

// Installs itself as the op observer for its lifetime.
class OpRecorder {
 public:
  OpRecorder() { setOpObserver(&OpRecorder::observe, this); }
  ~OpRecorder() { setOpObserver(nullptr, nullptr); }
  OpRecorder(const OpRecorder&) = delete;
  OpRecorder& operator=(const OpRecorder&) = delete;

  std::vector<RecordedOp> ops() {
    std::lock_guard lock(mu_);
    return ops_;
  }
  // The one op named `name` (fails the test when there is not exactly one).
  RecordedOp byName(const std::string& name);

 private:
  static void observe(const CompletedOp& op, void* self) {
    auto* r = static_cast<OpRecorder*>(self);
    std::lock_guard lock(r->mu_);
    r->ops_.push_back(RecordedOp{std::string(op.name), op.kind, op.direction, op.device,
                                 op.stream_id, op.start_ns, op.end_ns, op.correlation_id,
                                 op.bytes, op.abandoned});
  }
  std::mutex mu_;
  std::vector<RecordedOp> ops_;
};

// An op that does nothing but take `duration` of modelled time in `work_class`.
inline StreamOp timedOp(std::string_view name, WorkClass work_class, TimeNs duration) {
  StreamOp op;
  op.work_class = work_class;
  op.name = name;
  op.body = [duration](const OpContext&) {
    OpTiming t;
    t.duration_ns = duration;
    return t;
  };
  return op;
}

// An op that holds its stream until open() is called, so that a test can enqueue everything
// before anything runs, whatever the machine's load. Its modelled duration is the real time
// it was held.
class Gate {
 public:
  Gate() = default;
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  ~Gate() { open(); }

  StreamOp op(std::string_view name = "gate", WorkClass work_class = WorkClass::Copy) {
    StreamOp op;
    op.work_class = work_class;
    op.name = name;
    op.body = [this](const OpContext& ctx) {
      std::unique_lock lock(mu_);
      ++entered_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return open_; });
      OpTiming t;
      t.duration_ns = nowNs() - ctx.start_ns;
      return t;
    };
    return op;
  }
  // Blocks until `count` gate ops are holding their streams.
  void waitEntered(int count = 1) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return entered_ >= count; });
  }
  void open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int entered_ = 0;
};

constexpr TimeNs kMs = 1'000'000;
constexpr TimeNs kUs = 1'000;

}  // namespace simgpu::testing

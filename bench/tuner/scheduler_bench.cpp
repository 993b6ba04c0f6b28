// What the scheduler adds to one intercepted call (the runtime's hot path), with an executor
// that does nothing: a kernel launch touching a gradient buffer, one touching nothing the
// scheduler follows, and a held all-reduce, in a loop shaped like a training step. Then the
// same with the runtime's sequencing of threads (one mutex around each call, as
// tuner/runtime/src/plan_runtime.cpp takes it): one thread (the lock uncontended), two threads
// handing the step to each other as autograd's thread and the main thread do (backward on one,
// the updates on the other, in turn), and 2 or 4 threads calling at once (contended).
#include <benchmark/benchmark.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "syncopate/tuner/scheduler.hpp"

namespace {

using namespace syncopate::tuner;

class NullExecutor : public Executor {
 public:
  bool prepareEvents(std::uint32_t) override { return true; }
  StreamHandle communicationStream() override { return 0xC0; }
  StreamHandle joinStream() override { return 0xD0; }
  void passthrough(const Call&) override {}
  void recordApplicationEvent(const Call&, StreamHandle) override {}
  void issueHeld(const HeldCollective&) override {}
  void recordEvent(EventSlot, StreamHandle) override {}
  void waitEvent(StreamHandle, EventSlot) override {}
  void hostWait(EventSlot) override {}
  void queryWith(const Call&, EventSlot) override {}
  void issueUnit(const UnitIssue&) override {}
  bool agree(std::uint64_t, std::span<const HeldCollective>, bool) override { return true; }
  void fallback(Fallback, const Call&) override {}
};

constexpr int kLayers = 24;
constexpr std::uint64_t kLayerBytes = 1 << 20;
std::uint64_t grad(int l) { return 0x10000000ull + static_cast<std::uint64_t>(l) * kLayerBytes; }

// One training step: per layer a kernel writing its gradient and one touching activations
// only, then the all-reduces (held), then per layer an update reading the gradient. `updates`
// is where the updates begin.
struct Step {
  std::vector<Touch> produce = std::vector<Touch>(kLayers), update = std::vector<Touch>(kLayers);
  Touch activation{0x90000000ull, 0};
  std::vector<Call> calls;
  std::size_t updates = 0;
  Step();
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;
};

Step::Step() {
  std::vector<Call>& step = calls;
  for (int l = kLayers - 1; l >= 0; --l) {
    produce[static_cast<std::size_t>(l)] = {grad(l), 0};
    Call k;
    k.kind = CallKind::Kernel;
    k.stream = 1;
    k.touches = std::span<const Touch>(&produce[static_cast<std::size_t>(l)], 1);
    step.push_back(k);
    Call other = k;
    other.touches = std::span<const Touch>(&activation, 1);
    step.push_back(other);
  }
  for (int l = 0; l < kLayers; ++l) {
    Call a;
    a.kind = CallKind::Collective;
    a.stream = 1;
    a.collective = {0x77, 0, 4, syncopate::trace::CollType::AllReduce, syncopate::trace::DataType::Float32,
                    syncopate::trace::RedOp::Sum, -1, kLayerBytes / 4, grad(l), grad(l)};
    step.push_back(a);
  }
  updates = step.size();
  for (int l = 0; l < kLayers; ++l) {
    update[static_cast<std::size_t>(l)] = {grad(l), 0};
    Call u;
    u.kind = CallKind::Kernel;
    u.stream = 1;
    u.touches = std::span<const Touch>(&update[static_cast<std::size_t>(l)], 1);
    step.push_back(u);
  }
}

void BM_SchedulerStep(benchmark::State& state) {
  NullExecutor exec;
  ScheduleRules rules;  // groups unplanned: the same per-call work, without units
  Scheduler scheduler(rules, exec);
  const Step step;
  for (auto _ : state) {
    for (const Call& c : step.calls) scheduler.onCall(c);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(step.calls.size()));
}
BENCHMARK(BM_SchedulerStep);

// Every thread of the benchmark hands its calls to one scheduler through one mutex.
struct Sequenced {
  NullExecutor exec;
  ScheduleRules rules;
  Scheduler scheduler{rules, exec};
  std::mutex sequence;
  const Step step;
  void call(const Call& c) {
    const std::lock_guard one_at_a_time(sequence);
    scheduler.onCall(c);
  }
};

void BM_SequencedStep(benchmark::State& state) {
  static Sequenced shared;  // one for every thread of every run: the threads share it
  for (auto _ : state) {
    for (const Call& c : shared.step.calls) shared.call(c);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(shared.step.calls.size()));
}
BENCHMARK(BM_SequencedStep)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

// Backward (the gradient kernels and the all-reduces) on a second thread, the updates on this
// one, handed over in turn through a condition variable: calls the program orders.
void BM_SequencedHandoff(benchmark::State& state) {
  Sequenced s;
  std::mutex m;
  std::condition_variable turn;
  int backward_steps = 0, done_steps = 0;
  bool stop = false;
  std::thread backward([&] {
    for (int n = 1;; ++n) {
      {
        std::unique_lock lock(m);
        turn.wait(lock, [&] { return stop || backward_steps == n; });
        if (stop) return;
      }
      for (std::size_t i = 0; i < s.step.updates; ++i) s.call(s.step.calls[i]);
      {
        const std::lock_guard lock(m);
        done_steps = n;
      }
      turn.notify_all();
    }
  });
  int n = 0;
  for (auto _ : state) {
    ++n;
    {
      const std::lock_guard lock(m);
      backward_steps = n;
    }
    turn.notify_all();
    {
      std::unique_lock lock(m);
      turn.wait(lock, [&] { return done_steps == n; });
    }
    for (std::size_t i = s.step.updates; i < s.step.calls.size(); ++i) s.call(s.step.calls[i]);
  }
  {
    const std::lock_guard lock(m);
    stop = true;
  }
  turn.notify_all();
  backward.join();
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(s.step.calls.size()));
}
BENCHMARK(BM_SequencedHandoff)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

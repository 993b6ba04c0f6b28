// What the scheduler adds to one intercepted call (the runtime's hot path), with an executor
// that does nothing: a kernel launch touching a gradient buffer, one touching nothing the
// scheduler follows, and a held all-reduce, in a loop shaped like a training step.
#include <benchmark/benchmark.h>

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
  bool agree(std::uint64_t, std::span<const HeldCollective>) override { return true; }
  void fallback(Fallback, const Call&) override {}
};

constexpr int kLayers = 24;
constexpr std::uint64_t kLayerBytes = 1 << 20;
std::uint64_t grad(int l) { return 0x10000000ull + static_cast<std::uint64_t>(l) * kLayerBytes; }

// One training step: per layer a kernel writing its gradient and one touching activations
// only, then the all-reduces (held), then per layer an update reading the gradient.
void BM_SchedulerStep(benchmark::State& state) {
  NullExecutor exec;
  ScheduleRules rules;  // groups unplanned: the same per-call work, without units
  Scheduler scheduler(rules, exec);
  std::vector<Touch> produce(kLayers), update(kLayers);
  const Touch activation{0x90000000ull, 0};
  std::vector<Call> step;
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
  for (int l = 0; l < kLayers; ++l) {
    update[static_cast<std::size_t>(l)] = {grad(l), 0};
    Call u;
    u.kind = CallKind::Kernel;
    u.stream = 1;
    u.touches = std::span<const Touch>(&update[static_cast<std::size_t>(l)], 1);
    step.push_back(u);
  }
  for (auto _ : state) {
    for (const Call& c : step) scheduler.onCall(c);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(step.size()));
}
BENCHMARK(BM_SchedulerStep);

}  // namespace

BENCHMARK_MAIN();

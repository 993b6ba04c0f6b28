#include "simgpu/nccl/task_runner.hpp"

#include "simgpu/nccl/futex.hpp"

#include <sched.h>

#include <algorithm>
#include <map>

namespace simgpu::nccl {
namespace {

constexpr std::int64_t kSleepSliceNs = 100'000'000;
// With tasks on several communicators a rank has several doorbells; it sleeps on one and
// polls the others this often.
constexpr std::int64_t kPollSliceNs = 1'000'000;
// A peer's next step usually comes within microseconds: look again (yielding the core to
// whoever needs it) for this long before sleeping, which saves a sleep and a wake-up (two
// context switches) per step. Yielding matters on a loaded machine with fewer cores than
// ranks: a spin that holds its core keeps the peer it waits for from running.
constexpr std::int64_t kSpinNs = 20'000;

}  // namespace

Status runTasks(std::span<Task* const> tasks, const std::function<Status()>& cancelled,
                const std::function<void(std::int64_t)>& blocked) {
  std::vector<Endpoint*> endpoints;
  std::int64_t timeout_ns = 0;
  for (Task* task : tasks) {
    Endpoint* ep = &task->endpoint();
    if (std::find(endpoints.begin(), endpoints.end(), ep) == endpoints.end()) {
      endpoints.push_back(ep);
      timeout_ns = std::max(timeout_ns, ep->timeoutNs());
    }
  }
  auto fail = [&](const Status& st) {
    for (Endpoint* ep : endpoints) ep->abortCommunicator(st);
    return st;
  };

  std::vector<bool> done(tasks.size(), false);
  std::vector<std::uint32_t> seen(endpoints.size());
  std::vector<int> awaited;
  Watchdog dog(timeout_ns);
  std::int64_t blocked_since = 0;
  for (;;) {
    // Read the doorbells before looking at the shared state, so that a ring in between
    // keeps us from sleeping.
    for (std::size_t i = 0; i < endpoints.size(); ++i) seen[i] = endpoints[i]->doorbell();
    bool advanced = false;
    bool all_done = true;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      if (done[i]) continue;
      Progress p = Progress::Blocked;
      if (Status st = tasks[i]->step(&p); !st.ok()) return fail(st);
      if (p == Progress::Done) done[i] = true;
      else all_done = false;
      if (p != Progress::Blocked) advanced = true;
    }
    if (all_done) return Status::success();
    if (advanced) {
      dog.progressed();
      blocked_since = 0;
      continue;
    }
    const std::int64_t now = monotonicNowNs();
    if (blocked_since == 0) blocked_since = now;
    if (now - blocked_since < kSpinNs) {
      sched_yield();
      continue;
    }
    if (cancelled) {
      if (Status st = cancelled(); !st.ok()) return fail(st);
    }
    if (blocked) blocked(now);
    dog.startRound();
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      if (done[i]) continue;
      awaited.clear();
      tasks[i]->awaitedRanks(&awaited);
      if (Status st = dog.check(tasks[i]->endpoint(), awaited, tasks[i]->describe()); !st.ok()) return fail(st);
    }
    if (dog.recheckNow()) continue;
    endpoints.front()->sleep(seen.front(), endpoints.size() == 1 ? kSleepSliceNs : kPollSliceNs);
  }
}

GroupTiming combineTimings(std::span<const TaskTiming> timings) {
  GroupTiming out;
  std::int64_t serial = 0;
  std::map<int, std::int64_t> lanes;
  for (const TaskTiming& t : timings) {
    out.start_ns = std::max(out.start_ns, t.start_ns);
    if (t.lane < 0) serial += t.duration_ns;
    else lanes[t.lane] += t.duration_ns;
  }
  std::int64_t concurrent = 0;
  for (const auto& [lane, duration] : lanes) concurrent = std::max(concurrent, duration);
  out.duration_ns = serial + concurrent;
  return out;
}

}  // namespace simgpu::nccl

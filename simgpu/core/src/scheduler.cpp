// Stream workers and the time model's clocks. Each stream is a FIFO run by its own worker
// thread. An op starts (in model time) at the latest of: when it became runnable (enqueue +
// launch latency), the model end of the stream's previous op, the model end of every op it
// waits for, and, for Compute ops, when the device's compute engine is free. The worker sleeps
// until that absolute CLOCK_MONOTONIC time, runs the body, then sleeps until the model end,
// which interference may move while it sleeps. Reported times are model times, so a late
// wake-up is absorbed rather than accumulated.
//
// Decisions that depend on other streams (the interference that sets an op's end, who gets the
// compute engine) are taken in model time: a worker that is ahead in real time waits until the
// streams that could still change the answer have caught up (bounds.hpp), so that the answer
// is the same whatever the machine's load.
#include "bounds.hpp"
#include "clock.hpp"
#include "machine.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>

namespace simgpu::detail {
namespace {

// How long a worker waits, in real time, for other streams to catch up before it decides with
// what it knows. Workers lag behind by scheduling delays (milliseconds, tens of them on a
// loaded machine); a body that blocks on something outside simgpu (a host function waiting
// for the host, a collective whose turn comes after an op queued behind this one) never
// catches up, and then what it would have told is known not to change the answer anyway.
constexpr TimeNs kBoundWaitLimitNs = 1'000'000'000;

bool allTimed(const std::vector<Watch>& watches) {
  return std::all_of(watches.begin(), watches.end(), [](const Watch& w) { return w.timed; });
}

bool allDone(const Watch* watches, std::size_t count) {
  return std::all_of(watches, watches + count, [](const Watch& w) { return w.done; });
}

bool allDone(const std::vector<Watch>& watches) { return allDone(watches.data(), watches.size()); }

// Whether the worker times `e` before its real work has run: its duration is known at enqueue,
// its timing step tells it (StreamOp::timing), or it has no real work. Otherwise only its body can tell (a collective's start waits for its
// peers), so the worker runs it itself once every earlier body of the stream has run.
bool timedAhead(const Entry& e) { return e.op.duration_ns >= 0 || !e.op.body || e.op.timing; }

// No real work of the stream is pending on its body thread, and no op waits there to complete.
bool bodiesDrained(const Stream& s) {
  return s.bodies.empty() && s.body_running == 0 && s.timed_ops.empty() && !s.completing;
}

// Waits on `cv` until real time `target` (or a notification), learning how late timed waits
// wake up.
void waitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimeNs target) {
  if (cv.wait_until(lock, toTimePoint(target)) == std::cv_status::timeout) wakeLatency().observe(target, nowNs());
}

// Sleeps with the lock released until real time reaches `deadline` or the stream must
// abandon its work. False if abandoned.
bool sleepUntil(std::unique_lock<std::mutex>& lock, Stream& s, TimeNs deadline) {
  for (;;) {
    if (s.abandon) return false;
    if (nowNs() >= deadline) return true;
    waitUntil(s.worker_cv, lock, deadline);
  }
}

// Sleeps until the running op's model end (s.current_end, which interference may move while
// it sleeps); while a host waits on the stream, the last stretch is spun rather than slept,
// since a timed sleep can wake tens of microseconds late on a loaded machine. A late wake-up
// changes no model time, but a host waiting on the op sees the end only when the worker
// reports it. With no host waiting the worker only sleeps: a worker that keeps pace with the
// model, its real work on the body thread, would otherwise spin through every short op and
// take the cores that real work and the host need (waitForSeq wakes it when a host comes to
// wait). The spin yields: measured
// under load on 2 cores (docs/simgpu.md, "Host waits"), sleeping to the end, or spinning
// without yielding (which starves the threads the spinner waits for), puts the host-seen end
// of ops of 1 ms and more 2-4.5 % late (median), against 0.3-0.8 % with the yielding spin.
// False if abandoned.
bool sleepUntilEnd(std::unique_lock<std::mutex>& lock, Stream& s) {
  for (;;) {
    if (s.abandon) return false;
    const TimeNs end = s.current_end.load();
    const TimeNs now = nowNs();
    if (now >= end) return true;
    if (s.host_waiters == 0) {
      waitUntil(s.worker_cv, lock, end);
      continue;
    }
    if (const TimeNs window = wakeLatency().spinWindow(); end - now > window) {
      waitUntil(s.worker_cv, lock, end - window);
      continue;
    }
    lock.unlock();
    while (!s.abandon && nowNs() < s.current_end.load()) std::this_thread::yield();
    lock.lock();
  }
}

// --- waiting for other streams to catch up ---------------------------------------------------

// One wait (lock released) of a worker whose decision depends on other streams' bounds, until
// they move, the stream is abandoned or real time reaches `deadline`.
void waitForBounds(std::unique_lock<std::mutex>& lock, Machine& m, Stream& s, TimeNs deadline) {
  m.bound_waiters.push_back(&s);
  s.worker_cv.wait_until(lock, toTimePoint(deadline));
  std::erase(m.bound_waiters, &s);
}

// SIMGPU_LOG_BOUND_WAITS=1: each expired bound wait says on stderr which op waited and what
// stood in the way (the other streams' current ops), to find what a stall waited for.
bool logBoundWaits() {
  static const bool on = [] {
    const char* v = std::getenv("SIMGPU_LOG_BOUND_WAITS");
    return v != nullptr && *v == '1';
  }();
  return on;
}

void logExpiredWait(const Device& d, const Stream& s, const Entry& e, const char* what) {
  if (!logBoundWaits()) return;
  std::fprintf(stderr, "simgpu: pid %d device %d stream %llu: %s of %.*s (start %lld, end %lld) waited 1 s for:", static_cast<int>(getpid()), d.index, s.id, what,
               static_cast<int>(e.op.name.size()), e.op.name.data(), static_cast<long long>(e.start_ns), static_cast<long long>(e.end_ns));
  for (const auto& other : d.streams) {
    if (other.get() == &s || other->current == nullptr) continue;
    const Entry& c = *other->current;
    std::fprintf(stderr, " [stream %llu: %.*s phase %d start %lld queued %zu]", other->id, static_cast<int>(c.op.name.size()), c.op.name.data(),
                 static_cast<int>(c.phase), static_cast<long long>(c.start_ns), other->queue.size());
  }
  std::fprintf(stderr, " now %lld\n", static_cast<long long>(nowNs()));
}

// --- the compute engine -------------------------------------------------------------------

// The order in which the engine serves the ops asking for it: the model time each would start
// at, then the stream's priority, then when it asked; the stream id breaks what remains.
bool servedBefore(const Device& d, const Stream& a, const Stream& b) {
  const TimeNs start_a = std::max(a.engine_asked_at, d.engine_free_at);
  const TimeNs start_b = std::max(b.engine_asked_at, d.engine_free_at);
  if (start_a != start_b) return start_a < start_b;
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.engine_asked_at != b.engine_asked_at) return a.engine_asked_at < b.engine_asked_at;
  return a.id < b.id;
}

bool firstWaiting(const Device& d, const Stream& s) {
  return std::none_of(d.engine_waiters.begin(), d.engine_waiters.end(),
                      [&](const Stream* w) { return w != &s && servedBefore(d, *w, s); });
}

// True when no stream of the device that has not asked yet could still ask in time to be
// served before `s` (its op `e`).
bool noEarlierAsker(const Device& d, const Stream& s, const Entry& e) {
  const TimeNs start = std::max(s.engine_asked_at, d.engine_free_at);
  for (const auto& other : d.streams) {
    if (other.get() == &s || std::find(d.engine_waiters.begin(), d.engine_waiters.end(), other.get()) != d.engine_waiters.end())
      continue;
    const TimeNs bound = nextStartBound(*other, ClassSet{.compute = true}, &e);
    if (bound < start || (bound == start && other->priority <= s.priority)) return false;
  }
  return true;
}

// Waits until the engine is free and `e` is the op it serves next. False if abandoned.
bool acquireEngine(std::unique_lock<std::mutex>& lock, Machine& m, Device& d, Stream& s, Entry& e, TimeNs asked) {
  s.engine_asked_at = asked;
  d.engine_waiters.push_back(&s);
  TimeNs give_up = 0;  // set once only other streams' bounds stand in the way
  for (;;) {
    if (s.abandon) break;
    if (d.engine_holder == nullptr && firstWaiting(d, s)) {
      if (noEarlierAsker(d, s, e)) break;
      if (give_up == 0) give_up = nowNs() + kBoundWaitLimitNs;
      if (nowNs() >= give_up) {
        ++m.stats.bound_waits_expired;
        logExpiredWait(d, s, e, "engine");
        break;
      }
      waitForBounds(lock, m, s, give_up);
      continue;
    }
    s.worker_cv.wait(lock);
  }
  std::erase(d.engine_waiters, &s);
  if (s.abandon) {
    for (Stream* w : d.engine_waiters) w->worker_cv.notify_one();
    return false;
  }
  d.engine_holder = &e;
  return true;
}

void releaseEngine(Device& d, TimeNs end) {
  d.engine_holder = nullptr;
  d.engine_free_at = std::max(d.engine_free_at, end);
  for (Stream* w : d.engine_waiters) w->worker_cv.notify_one();
}

// --- compute/communication interference ----------------------------------------------------

bool interferes(WorkClass c) { return c == WorkClass::Compute || c == WorkClass::Communication; }

// Recomputes the end of every running interfering op of the device from the timeline and
// wakes the workers (and host waiters) whose end moved.
void retime(const Machine& m, Device& d) {
  std::vector<TimelineOp>& ops = d.scratch;
  ops.assign(d.completed.begin(), d.completed.end());
  for (const Entry* e : d.running) ops.push_back(TimelineOp{e->op.work_class, e->model_start_ns, e->work_ns, false, 0, e->op.interference_weight});
  computeEnds(ops, Slowdowns{m.profile.interference.compute_slowdown, m.profile.interference.communication_slowdown});
  for (std::size_t i = 0; i < d.running.size(); ++i) {
    Entry& e = *d.running[i];
    const TimeNs end = ops[d.completed.size() + i].end;
    if (end == e.end_ns) continue;
    e.end_ns = end;
    e.owner->current_end.store(end);
    e.owner->worker_cv.notify_one();
    if (e.owner->host_waiters > 0) e.owner->host_cv.notify_all();
  }
}

void joinTimeline(const Machine& m, Device& d, Entry& e) {
  e.on_timeline = true;
  d.running.push_back(&e);
  retime(m, d);
}

// `e` completed at `end`: it stays on the timeline as a fixed interval for as long as it
// overlaps an op that runs (no op can join that starts before it ended: see confirmEnd).
void leaveTimeline(const Machine& m, Device& d, Entry& e, TimeNs end) {
  e.on_timeline = false;
  std::erase(d.running, &e);
  d.completed.push_back(TimelineOp{e.op.work_class, e.model_start_ns, e.work_ns, true, end, e.op.interference_weight});
  TimeNs earliest = kNever;
  for (const Entry* r : d.running) earliest = std::min(earliest, r->model_start_ns);
  std::erase_if(d.completed, [&](const TimelineOp& c) { return c.end <= earliest; });
  if (end != e.end_ns) retime(m, d);  // cut short (abandoned): the others speed up sooner
}

// True when no op that is not on the device's timeline yet could start before `e` ends, so
// that its end is final. Only ops of the other class change it directly; ops of its own class
// do so through an op of the other class, if any is on the timeline.
bool endIsFinal(const Device& d, const Stream& s, const Entry& e) {
  const bool is_compute = e.op.work_class == WorkClass::Compute;
  const auto other_class = [&](const TimelineOp& op) { return (op.work_class == WorkClass::Compute) != is_compute; };
  bool other_on_timeline = std::any_of(d.completed.begin(), d.completed.end(), other_class);
  for (const Entry* r : d.running) other_on_timeline = other_on_timeline || (r->op.work_class == WorkClass::Compute) != is_compute;
  const ClassSet classes{.compute = !is_compute || other_on_timeline, .communication = is_compute || other_on_timeline};
  return std::all_of(d.streams.begin(), d.streams.end(), [&](const auto& other) {
    return other.get() == &s || nextStartBound(*other, classes, &e) >= e.end_ns;
  });
}

// Sleeps until the op's model end and until that end is final (endIsFinal). False if
// abandoned.
bool confirmEnd(std::unique_lock<std::mutex>& lock, Machine& m, Device& d, Stream& s, Entry& e) {
  TimeNs give_up = 0;
  for (;;) {
    if (!sleepUntilEnd(lock, s)) return false;
    if (!e.on_timeline || endIsFinal(d, s, e)) return true;
    if (give_up == 0) give_up = nowNs() + kBoundWaitLimitNs;
    if (nowNs() >= give_up) {
      ++m.stats.bound_waits_expired;
      logExpiredWait(d, s, e, "end");
      return true;
    }
    waitForBounds(lock, m, s, give_up);
    if (s.abandon) return false;
  }
}

// --- completion ----------------------------------------------------------------------------

// Op s.timed ended at `end`, finally: the waiters on it and on the ops before it learn their end.
void fulfilTimedWatchers(Stream& s, TimeNs end) {
  for (Watch* w : s.watchers) {
    if (w->timed || w->on_dispatch || w->seq > s.timed) continue;
    w->end = end;
    w->timed = true;
    w->waiter->worker_cv.notify_one();
  }
}

// Fulfils the watches on `s` that `met` picks, at `end` unless their end is known: done, their
// waiters woken, and no longer watched.
template <typename Met>
void fulfilAndForget(Stream& s, TimeNs end, Met met) {
  auto& ws = s.watchers;
  for (std::size_t i = 0; i < ws.size();) {
    Watch* w = ws[i];
    if (met(*w)) {
      if (!w->timed) w->end = end;
      w->timed = true;
      w->done = true;
      w->waiter->worker_cv.notify_one();
      w->waiter->body_cv.notify_one();
      ws[i] = ws.back();
      ws.pop_back();
    } else {
      ++i;
    }
  }
}

// Op s.completed's real work is done: so is that of the ops the waiters wait for.
void fulfilWatchers(Stream& s, TimeNs end) {
  fulfilAndForget(s, end, [&](const Watch& w) { return w.seq <= s.completed; });
}

// Op `seq` of `s` has left its work queue at `at`: the ops of other streams behind it in that
// queue may leave it too.
void fulfilDispatchWatchers(Stream& s, std::uint64_t seq, TimeNs at) {
  s.dispatched = seq;
  fulfilAndForget(s, at, [&](const Watch& w) { return w.on_dispatch && w.seq <= seq; });
}

// The worker has timed `e` to its final end: the stream's clock moves on, and what waits for
// `e` in model time can be timed, whether or not its real work has run.
void finishTiming(Stream& s, const Entry& e, TimeNs end) {
  s.clock = std::max(s.clock, end);
  s.current_end.store(0);
  s.timed = e.seq;
  fulfilTimedWatchers(s, end);
}

void completeEntry(Machine& m, Stream& s, Entry& e, TimeNs end, bool abandoned) {
  s.completed.store(e.seq);
  fulfilWatchers(s, end);
  for (Watch& w : e.watches)
    if (!w.done) std::erase(w.producer->watchers, &w);
  if (e.event) {
    Event& ev = *e.event;
    ev.done_gen = std::max(ev.done_gen, e.event_gen);
    if (e.event_gen == ev.gen) ev.time = end;
  }
  ++(abandoned ? m.stats.ops_abandoned : m.stats.ops_completed);
  if (s.host_waiters > 0) s.host_cv.notify_all();
}

OpTiming runBody(const std::function<OpTiming(const OpContext&)>& body, std::string_view name, const OpContext& ctx) {
  try {
    return body(ctx);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "simgpu: op %.*s failed: %s\n", static_cast<int>(name.size()), name.data(), ex.what());
  } catch (...) {
    std::fprintf(stderr, "simgpu: op %.*s failed with an unknown exception\n", static_cast<int>(name.size()),
                 name.data());
  }
  OpTiming failed;
  failed.error = cudaErrorLaunchFailure;
  return failed;
}

void notifyObserver(std::unique_lock<std::mutex>& lock, Machine& m, Stream& s, const Entry& e,
                    TimeNs start, TimeNs end, bool abandoned) {
  OpObserver observer = m.observer.load(std::memory_order_acquire);
  if (observer == nullptr) return;
  CompletedOp op;
  op.kind = e.op.kind;
  op.direction = e.op.direction;
  op.work_class = e.op.work_class;
  op.device = s.device->index;
  op.stream = e.given;
  op.stream_id = s.id;
  op.name = e.op.name;
  op.start_ns = start;
  op.end_ns = end;
  op.correlation_id = e.op.correlation_id;
  op.bytes = e.op.bytes;
  op.abandoned = abandoned;
  void* data = m.observer_data.load(std::memory_order_acquire);
  lock.unlock();
  observer(op, data);
  lock.lock();
}

// Gives `e` its model times: it starts at `model_start` and runs `duration` at full speed,
// stretched by interference once it is on the device's timeline.
void setModelTimes(Machine& m, Device& d, Stream& s, Entry& e, TimeNs model_start, TimeNs duration) {
  e.model_start_ns = model_start;
  e.work_ns = duration;
  e.end_ns = model_start + duration;
  e.phase = Phase::Timed;
  if (interferes(e.op.work_class) && duration > 0) joinTimeline(m, d, e);
  boundsMoved(m);
  s.current_end.store(std::max<TimeNs>(e.end_ns, 1));
  if (s.host_waiters > 0) s.host_cv.notify_all();  // a spinning host can now plan its spin
}

// Completes, in stream order, the timed ops whose bodies (and every earlier body) have run.
// The lock is released while observers are told; `completing` keeps the worker from completing
// a later op meanwhile.
void completeTimedOps(std::unique_lock<std::mutex>& lock, Machine& m, Stream& s) {
  s.completing = true;
  while (!s.timed_ops.empty()) {
    const std::uint64_t seq = s.timed_ops.front().seq;
    if (s.body_running != 0 && s.body_running <= seq) break;
    if (!s.bodies.empty() && s.bodies.front().seq <= seq) break;
    Entry e = std::move(s.timed_ops.front());
    s.timed_ops.pop();
    const bool abandoned = e.abandoned || s.abandon;
    notifyObserver(lock, m, s, e, e.model_start_ns, e.end_ns, abandoned);
    completeEntry(m, s, e, e.end_ns, abandoned);
  }
  s.completing = false;
}

// The stream's body thread: runs the real work of the ops its worker timed ahead, in stream
// order, each once the real work of what it waits for is done, and completes them. So a stream
// whose real work lags far behind its model times (a CPU implementation of a large kernel on a
// loaded machine) still has its model times decided in step with the other streams.
void bodyThreadMain(Machine& m, Stream& s) {
  char name[16];
  std::snprintf(name, sizeof(name), "simgpu d%d b%llu", s.device->index, s.id);
  pthread_setname_np(pthread_self(), name);
  // Real work runs at a lower priority (nice 10: a tenth of a normal thread's share of a
  // contended core) so that the workers, which keep the model's time, and the program's own
  // threads come first, and a machine busy with real work still decides model times promptly
  // (a rendezvous of every rank's worker per collective). Not SCHED_IDLE: threads that spin
  // while they wait for real work (a host's sync, a peer's data) would starve it.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
  Device& d = *s.device;
  std::unique_lock lock(m.mu);
  for (;;) {
    completeTimedOps(lock, m, s);
    if (!s.bodies.empty()) {
      BodyJob job = std::move(s.bodies.front());
      s.bodies.pop();
      s.body_running = job.seq;
      s.body_cv.wait(lock, [&] { return s.abandon || allDone(job.watches, job.watch_count); });
      if (!s.abandon && job.body) {
        lock.unlock();
        const TimeNs body_start = nowNs();
        const OpTiming timing = runBody(job.body, job.name, job.context);
        const TimeNs body_ns = nowNs() - body_start;
        job.body = nullptr;  // what the body holds goes before the op completes, as on the worker
        lock.lock();
        if (timing.error != cudaSuccess && d.sticky == cudaSuccess) d.sticky = timing.error;
        if (job.work_ns > 0 && body_ns > job.work_ns) ++m.stats.ops_overran;
      }
      s.body_running = 0;
      continue;
    }
    if (bodiesDrained(s)) s.worker_cv.notify_one();  // a worker may wait to run a body itself
    if (s.body_thread_stop && bodiesDrained(s)) break;
    s.body_cv.wait(lock);
  }
}

void runOnBodyThread(Machine& m, Stream& s, Entry& e, TimeNs start) {
  BodyJob& job = s.bodies.push();
  job.seq = e.seq;
  job.body = std::move(e.op.body);
  job.name = e.op.name;
  job.context = OpContext{s.device->index, e.given, start};
  job.work_ns = e.work_ns;
  job.watches = e.watches.data();
  job.watch_count = e.watches.size();
  if (!s.body_thread_started) {
    s.body_thread_started = true;
    s.body_thread = std::thread([&m, &s] { bodyThreadMain(m, s); });
  } else {
    s.body_cv.notify_one();
  }
}

void runEntry(std::unique_lock<std::mutex>& lock, Machine& m, Stream& s, Entry& e) {
  Device& d = *s.device;
  const bool ahead = timedAhead(e);
  e.phase = Phase::Waiting;
  // Timed ahead, an op waits only for the model ends of what it waits for; an op whose body
  // tells its timing waits for their real work, and for the stream's own earlier bodies.
  s.worker_cv.wait(lock, [&] {
    return s.abandon || (ahead ? allTimed(e.watches) : allDone(e.watches) && bodiesDrained(s));
  });
  TimeNs start = std::max(e.ready_ns, s.clock);
  for (const Watch& w : e.watches) start = std::max(start, w.end);
  e.dispatch_ns = start;
  fulfilDispatchWatchers(s, e.seq, start);

  bool abandoned = s.abandon;
  const bool uses_engine = !abandoned && e.op.work_class == WorkClass::Compute;
  if (uses_engine) {
    if (acquireEngine(lock, m, d, s, e, start))
      start = std::max(start, d.engine_free_at);
    else
      abandoned = true;
  }
  e.start_ns = start;
  e.phase = Phase::Started;
  boundsMoved(m);
  if (!abandoned) abandoned = !sleepUntil(lock, s, start);

  TimeNs model_start = start;
  TimeNs end = 0;
  if (!abandoned) {
    if (ahead) {
      // Timed now, before its real work: other streams' decisions see its end while the body
      // runs, however long that takes.
      if (e.op.timing) {
        lock.unlock();
        const OpTiming timing = runBody(e.op.timing, e.op.name, OpContext{d.index, e.given, start, &e});
        lock.lock();
        if (timing.error != cudaSuccess && d.sticky == cudaSuccess) d.sticky = timing.error;
        if (timing.model_start_ns != 0) model_start = timing.model_start_ns;
        setModelTimes(m, d, s, e, model_start, std::max<TimeNs>(0, timing.duration_ns));
      } else {
        setModelTimes(m, d, s, e, start, std::max<TimeNs>(0, e.op.duration_ns));
      }
      // A body, or a wait for real work not done yet, goes to the body thread: the stream's later
      // real work runs after it.
      if (e.op.body || !allDone(e.watches)) runOnBodyThread(m, s, e, start);
    } else {
      lock.unlock();
      const TimeNs body_start = nowNs();
      const OpTiming timing = runBody(e.op.body, e.op.name, OpContext{d.index, e.given, start, &e});
      const TimeNs body_ns = nowNs() - body_start;
      lock.lock();
      if (timing.error != cudaSuccess && d.sticky == cudaSuccess) d.sticky = timing.error;
      if (timing.model_start_ns != 0) model_start = timing.model_start_ns;
      setModelTimes(m, d, s, e, model_start, std::max<TimeNs>(0, timing.duration_ns));
      // The real work (not waiting for the model start, which a body like a collective's does)
      // took longer than the op's modelled time.
      const TimeNs waited = std::max<TimeNs>(0, e.model_start_ns - start);
      if (e.work_ns > 0 && body_ns - waited > e.work_ns) ++m.stats.ops_overran;
    }
    model_start = e.model_start_ns;
    abandoned = !confirmEnd(lock, m, d, s, e);
    end = abandoned ? std::min(e.end_ns, nowNs()) : e.end_ns;
    if (e.on_timeline) leaveTimeline(m, d, e, end);
  } else {
    model_start = end = nowNs();
  }
  if (uses_engine) releaseEngine(d, end);
  finishTiming(s, e, end);
  boundsMoved(m);
  e.model_start_ns = model_start;
  e.end_ns = end;
  e.abandoned = abandoned;
  if (!bodiesDrained(s)) {
    // Its body, or an earlier one, has not run yet: the body thread completes it after them.
    s.timed_ops.push() = std::move(e);
    s.body_cv.notify_one();
    return;
  }
  notifyObserver(lock, m, s, e, model_start, end, abandoned);
  completeEntry(m, s, e, end, abandoned);
  boundsMoved(m);
}

void workerMain(Machine& m, Stream& s) {
  useExactTimers();
  char name[16];  // the kernel's limit, NUL included: shown by debuggers and profilers
  std::snprintf(name, sizeof(name), "simgpu d%d s%llu", s.device->index, s.id);
  pthread_setname_np(pthread_self(), name);
  std::unique_lock lock(m.mu);
  for (;;) {
    s.worker_cv.wait(lock, [&] { return !s.queue.empty() || s.retiring || s.abandon; });
    if (s.queue.empty()) break;
    Entry e = std::move(s.queue.front());
    s.queue.pop();
    s.current = &e;
    runEntry(lock, m, s, e);
    s.current = nullptr;
  }
  if (s.body_thread_started) {
    // The stream's last real work runs (or, abandoned, is dropped) before the stream goes.
    s.body_thread_stop = true;
    s.body_cv.notify_one();
    lock.unlock();
    s.body_thread.join();
    lock.lock();
  }
  s.worker_exited = true;
  m.reaper_cv.notify_all();
}

void startWorker(Machine& m, Stream& s) {
  s.worker_started = true;
  s.worker = std::thread([&m, &s] { workerMain(m, s); });
}

}  // namespace

void boundsMoved(Machine& m) {
  for (Stream* waiter : m.bound_waiters) waiter->worker_cv.notify_one();
}

std::shared_ptr<Stream> newStream(Machine& m, Device& d, StreamKind kind, unsigned flags, int priority) {
  auto s = std::make_shared<Stream>();
  s->device = &d;
  s->kind = kind;
  s->flags = flags;
  s->priority = priority;
  s->id = m.next_stream_id++;
  s->connection = d.streams_made++ % d.connections.size();
  d.streams.push_back(s);
  return s;
}

Stream& legacyStream(Machine& m, Device& d) {
  if (!d.legacy) d.legacy = newStream(m, d, StreamKind::LegacyDefault, cudaStreamDefault, 0);
  return *d.legacy;
}

cudaError_t enqueueLocked(Machine& m, Stream& s, cudaStream_t given, StreamOp&& op,
                          std::vector<Watch> watches, std::shared_ptr<Event> event,
                          std::uint64_t event_gen) {
  Device& d = *s.device;
  if (m.exiting.load()) return cudaErrorCudartUnloading;
  if (d.sticky != cudaSuccess) return d.sticky;
  if (d.resetting || s.abandon) return cudaErrorContextIsDestroyed;
  // The legacy default stream waits for all prior work of the device's blocking streams, and
  // every blocking stream waits for all prior work of the legacy default stream.
  if (s.kind == StreamKind::LegacyDefault) {
    for (const auto& other : d.streams)
      if (other.get() != &s && other->blocking() && !other->idle())
        watches.push_back(Watch{other.get(), other->enqueued, &s});
  } else if (s.blocking() && d.legacy && !d.legacy->idle()) {
    watches.push_back(Watch{d.legacy.get(), d.legacy->enqueued, &s});
  }
  // The op leaves the work queue its stream shares after the op enqueued on it before, when that
  // is another stream's and still queued: the false dependency of streams sharing a connection.
  Connection& connection = d.connections[s.connection];
  if (auto before = connection.last_stream.lock();
      before && before.get() != &s && !before->abandon && before->dispatched < connection.last_seq) {
    Watch w{before.get(), connection.last_seq, &s};
    w.on_dispatch = true;
    watches.push_back(w);
  }
  connection.last_stream = s.weak_from_this();
  connection.last_seq = s.enqueued + 1;
  Entry& e = s.queue.push();
  e.op = std::move(op);
  if (e.op.correlation_id == 0) e.op.correlation_id = nextCorrelationId();
  if (EnqueueObserver observer = m.enqueue_observer.load(std::memory_order_acquire)) {
    observer(e.op.correlation_id, m.enqueue_observer_data.load(std::memory_order_acquire));
  }
  e.owner = &s;
  e.given = given;
  e.seq = ++s.enqueued;
  e.ready_ns = nowNs() + m.profile.device.launch_latency_ns;
  e.watches = std::move(watches);
  for (Watch& w : e.watches) {
    w.waiter = &s;
    if (w.on_dispatch) {
      w.producer->watchers.push_back(&w);
    } else if (w.producer->completed >= w.seq) {
      w.timed = w.done = true;  // already over: its end is in the past, before this op can start
    } else {
      w.timed = w.producer->timed >= w.seq;  // likewise its end, though its real work still runs
      w.producer->watchers.push_back(&w);
    }
  }
  e.event = std::move(event);
  e.event_gen = event_gen;
  if (!s.worker_started)
    startWorker(m, s);
  else
    s.worker_cv.notify_one();
  boundsMoved(m);
  return cudaSuccess;
}

HostWait hostWaitFor(const Device& d) {
  return (d.flags & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync ? HostWait::Block : HostWait::Spin;
}

// True when op `seq` completes as soon as the running op does: it is the running op, or only
// free markers with nothing to wait for (event records) lie between them.
bool completesWithCurrent(Stream& s, std::uint64_t seq) {
  if (s.current == nullptr || s.current->seq > seq) return false;
  for (std::size_t i = 0; i < s.queue.size() && s.queue.at(i).seq <= seq; ++i) {
    const Entry& e = s.queue.at(i);
    if (e.op.work_class != WorkClass::Marker || e.op.body || !e.watches.empty()) return false;
  }
  return true;
}

void waitForSeq(std::unique_lock<std::mutex>& lock, Stream& s, std::uint64_t seq, HostWait how) {
  ++s.host_waiters;
  s.worker_cv.notify_one();  // a worker sleeping towards an end spins the last stretch from now on
  while (s.completed.load() < seq) {
    // The end is known once the op that completes `seq` is running towards it.
    const TimeNs end = completesWithCurrent(s, seq) ? s.current_end.load() : 0;
    if (how == HostWait::Block || end == 0) {
      s.host_cv.wait(lock);
      continue;
    }
    const TimeNs window = wakeLatency().spinWindow();
    if (end - nowNs() > window) {
      waitUntil(s.host_cv, lock, end - window);
      continue;
    }
    lock.unlock();  // yielding, for the reason sleepUntilEnd gives
    while (s.completed.load() < seq && nowNs() < end + window) std::this_thread::yield();
    lock.lock();
    if (s.completed.load() < seq) s.host_cv.wait(lock);  // the worker is late: stop spinning
  }
  --s.host_waiters;
}

void synchronizeLocked(std::unique_lock<std::mutex>& lock, Machine&, Stream& s) {
  const HostWait how = hostWaitFor(*s.device);
  if (s.kind != StreamKind::LegacyDefault) {
    waitForSeq(lock, s, s.enqueued, how);
    return;
  }
  // Synchronising the legacy stream is itself a legacy-stream action: it covers the prior work
  // of every blocking stream of the device.
  std::vector<std::pair<std::shared_ptr<Stream>, std::uint64_t>> targets;
  for (const auto& other : s.device->streams)
    if (other->blocking() && !other->idle()) targets.emplace_back(other, other->enqueued);
  for (auto& [stream, seq] : targets) waitForSeq(lock, *stream, seq, how);
}

bool queryLocked(Machine&, Stream& s) {
  if (s.kind != StreamKind::LegacyDefault) return s.idle();
  return std::all_of(s.device->streams.begin(), s.device->streams.end(),
                     [](const auto& other) { return !other->blocking() || other->idle(); });
}

void retireStream(Stream& s) {
  s.retiring = true;
  s.worker_cv.notify_one();
}

void reapStreams(Device& d) {
  std::erase_if(d.streams, [&](const std::shared_ptr<Stream>& s) {
    const bool stopping = s->retiring || s->abandon;
    if (!stopping || (s->worker_started && !s->worker_exited)) return false;
    if (s->worker.joinable()) s->worker.join();
    if (d.legacy == s) d.legacy.reset();
    return true;
  });
}

void abandonDevice(std::unique_lock<std::mutex>& lock, Machine& m, Device& d) {
  for (const auto& s : d.streams) {
    s->abandon = true;
    s->worker_cv.notify_one();
    s->body_cv.notify_one();
  }
  // A worker stuck in a body that never returns (a collective whose peers are gone and that
  // does not poll shuttingDown) must not hang exit or reset forever.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  const auto me = std::this_thread::get_id();
  const bool all_stopped = m.reaper_cv.wait_until(lock, deadline, [&] {
    return std::all_of(d.streams.begin(), d.streams.end(), [&](const auto& s) {
      return !s->worker_started || s->worker_exited || s->worker.get_id() == me;
    });
  });
  for (const auto& s : d.streams) {
    if (!s->worker.joinable()) continue;
    if (s->worker_exited) {
      s->worker.join();
    } else {
      // Ourselves (exit or reset called from an op body) or stuck: the thread keeps running,
      // so its stream must outlive every owner.
      s->worker.detach();
      new std::shared_ptr<Stream>(s);  // NOLINT: deliberately never freed
    }
  }
  if (!all_stopped)
    std::fprintf(stderr, "simgpu: device %d: an op did not return within 5 s of %s; leaving it\n",
                 d.index, m.exiting.load() ? "process exit" : "cudaDeviceReset");
}

}  // namespace simgpu::detail

// The simulated machine's state, private to the core. One mutex (Machine::mu) guards every
// queue, clock and registry; it is never held while a worker sleeps or runs an op's body, and
// each wait is on a condition variable of the stream concerned. One lock keeps cross-stream
// and cross-device dependencies (events, the legacy default stream) free of lock ordering.
#pragma once

#include "ring_queue.hpp"
#include "simgpu/core/timeline.hpp"

#include <simgpu/core/observer.hpp>
#include <simgpu/core/profile.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/stream_op.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace simgpu::detail {

struct Stream;
struct Device;
struct Event;

// "Wait until `producer` has completed its op number `seq`": the end of that op (model time)
// is written here by the producer when it completes. Lives in the waiting entry's vector, so
// its address is stable while the entry moves.
// An op's dependency on op `seq` of another stream. Its model end is known (`timed`, `end`)
// once the producer's worker has timed it, which may be long before its real work is done
// (`done`): the waiter is timed from the first and runs its own real work after the second.
// A watch `on_dispatch` waits only until op `seq` leaves the head of the hardware work queue
// both streams share (CUDA_DEVICE_MAX_CONNECTIONS, Device::connections): `end` is then that
// op's dispatch time, and `timed` and `done` are set together.
struct Watch {
  Stream* producer = nullptr;
  std::uint64_t seq = 0;
  Stream* waiter = nullptr;
  TimeNs end = 0;
  bool timed = false;
  bool done = false;
  bool on_dispatch = false;
};

// Where an op is on its way through its stream's worker; what the scheduler can say about its
// model times depends on it (see bounds.hpp).
enum class Phase : std::uint8_t {
  Queued,   // not yet taken by the worker
  Waiting,  // taken: waiting for what it depends on or for the compute engine
  Started,  // starts at start_ns (or later, if its body says so: collectives); the worker
            // sleeps until then and runs the body
  Timed,    // model start and end known (the end may still move under interference)
};

struct Entry {
  StreamOp op;
  Stream* owner = nullptr;
  cudaStream_t given = nullptr;  // the handle the caller used, reported back as is
  std::uint64_t seq = 0;
  TimeNs ready_ns = 0;  // enqueue time + launch latency: the earliest model start
  std::vector<Watch> watches;
  std::shared_ptr<Event> event;  // the event an EventRecord marker records
  std::uint64_t event_gen = 0;
  Phase phase = Phase::Queued;
  TimeNs start_ns = 0;        // from Started: the model start the body is given
  // From Started, for an op whose start its peers tell: a lower bound on that start its timing
  // step learnt from them (raiseStartBound), at least start_ns once set.
  TimeNs start_floor = 0;
  // From Started: when it left its work queue, what it waited for done (start_ns, or earlier
  // for a kernel that then waited for the compute engine).
  TimeNs dispatch_ns = 0;
  TimeNs model_start_ns = 0;  // from Timed: the model start
  TimeNs work_ns = 0;         // from Timed: the modelled duration at full speed
  TimeNs end_ns = 0;          // from Timed: the model end
  bool on_timeline = false;   // an interfering op on its device's timeline (Device::running)
  bool abandoned = false;     // from timed: cut short by a reset or exit
};

// The real work of an op timed ahead of it (its body, or only its wait for other streams' real
// work), and what running it needs.
struct BodyJob {
  std::uint64_t seq = 0;
  std::function<OpTiming(const OpContext&)> body;  // empty for an op that only waits
  std::string_view name;  // for the body's error message
  OpContext context;      // what the body is given: device, stream, model start
  TimeNs work_ns = 0;  // its modelled duration, to count overruns
  // The op's watches (in its entry, whose vector's storage does not move): its real work
  // waits until every producer's real work is done.
  const Watch* watches = nullptr;
  std::size_t watch_count = 0;
};

enum class StreamKind : std::uint8_t { LegacyDefault, PerThreadDefault, User };

struct Stream : std::enable_shared_from_this<Stream> {
  Device* device = nullptr;
  StreamKind kind = StreamKind::User;
  unsigned flags = 0;
  int priority = 0;
  unsigned long long id = 0;
  std::size_t connection = 0;   // its hardware work queue (Device::connections)
  std::uint64_t dispatched = 0;  // seq of the last op that left that queue

  RingQueue<Entry> queue;  // not yet taken by the worker
  Entry* current = nullptr;  // the op the worker is on (lives on the worker's stack)
  std::uint64_t enqueued = 0;  // seq of the last op enqueued
  // Written under Machine::mu; read without it by host threads spinning on a sync.
  std::atomic<std::uint64_t> completed{0};  // seq of the last op completed
  std::atomic<TimeNs> current_end{0};       // model end of the running op once known, else 0
  TimeNs clock = 0;  // model end of the last op the worker has timed
  std::uint64_t timed = 0;  // seq of the last op the worker has timed (its end final)
  std::vector<Watch*> watchers;  // other streams' entries waiting for ops of this one
  int host_waiters = 0;

  // The real work of ops the worker timed ahead of it (docs/simgpu.md, "Real work slower than
  // the model"), run in stream order by the stream's body thread, which also completes them.
  RingQueue<BodyJob> bodies;     // not yet run
  RingQueue<Entry> timed_ops;    // timed, completed once every body up to theirs has run
  std::uint64_t body_running = 0;  // seq of the op whose body runs now, 0 when none
  bool completing = false;         // the body thread is completing timed ops (lock released)
  std::condition_variable body_cv;
  std::thread body_thread;
  bool body_thread_started = false;
  bool body_thread_stop = false;

  std::condition_variable worker_cv;
  std::condition_variable host_cv;
  std::thread worker;
  bool worker_started = false;
  bool worker_exited = false;
  bool retiring = false;  // destroyed by the program: drain, then stop
  std::atomic<bool> abandon{false};  // reset or exit: drop pending work, cut the running op short
  TimeNs engine_asked_at = 0;  // while waiting for the compute engine: the model time it asked

  bool blocking() const { return kind != StreamKind::User || (flags & cudaStreamNonBlocking) == 0; }
  bool idle() const { return completed == enqueued; }
};

struct Event {
  Device* device = nullptr;
  unsigned flags = 0;
  std::uint64_t gen = 0;       // number of records so far
  std::uint64_t done_gen = 0;  // highest record completed
  TimeNs time = 0;             // model time of the latest completed record
  std::shared_ptr<Stream> stream;  // where the latest record was enqueued
  std::uint64_t seq = 0;           // and its seq there
  bool recorded() const { return gen != 0; }
  bool complete() const { return done_gen >= gen; }
};

// A hardware work queue (a connection, CUDA_DEVICE_MAX_CONNECTIONS of them per device): the
// streams dealt to it share one FIFO, so an op leaves it only after every op enqueued on it
// before, of any of those streams, has left it: the last op enqueued, which the next one waits
// for when it is another stream's.
struct Connection {
  std::weak_ptr<Stream> last_stream;
  std::uint64_t last_seq = 0;
};

struct Device {
  int index = 0;
  std::vector<std::shared_ptr<Stream>> streams;  // every stream whose worker is not reaped
  std::shared_ptr<Stream> legacy;
  std::vector<Connection> connections;  // Machine::max_connections of them
  std::size_t streams_made = 0;         // streams are dealt to connections in creation order
  cudaError_t sticky = cudaSuccess;
  bool resetting = false;
  unsigned flags = 0;

  // Compute engine: Compute ops of all streams of the device run one at a time; when it frees,
  // the waiting op of the highest-priority stream goes first, then the one that asked first
  // (in model time).
  Entry* engine_holder = nullptr;
  TimeNs engine_free_at = 0;
  std::vector<Stream*> engine_waiters;

  // Compute/communication interference (timeline.hpp): the interfering ops that run, and those
  // that have completed but overlap one that runs.
  std::vector<Entry*> running;
  std::vector<TimelineOp> completed;
  std::vector<TimelineOp> scratch;  // reused by every computation of the ends
};

inline constexpr std::size_t kDefaultMaxConnections = 8;
inline constexpr std::size_t kMostConnections = 32;

struct Machine {
  std::mutex mu;
  Profile profile;
  cudaError_t init_error = cudaSuccess;
  std::atomic<bool> exiting{false};
  std::vector<std::unique_ptr<Device>> devices;
  // CUDA_DEVICE_MAX_CONNECTIONS: hardware work queues per device, as CUDA reads the variable
  // when it makes a context (1 to 32, default 8).
  std::size_t max_connections = kDefaultMaxConnections;
  std::unordered_map<Stream*, std::shared_ptr<Stream>> user_streams;
  std::unordered_map<Event*, std::shared_ptr<Event>> events;
  std::condition_variable reaper_cv;  // a worker exited
  unsigned long long next_stream_id = 1;
  Stats stats;
  // Workers waiting until other streams' bounds pass a model time (bounds.hpp): woken whenever
  // an op changes phase, so that they look again.
  std::vector<Stream*> bound_waiters;
  std::atomic<OpObserver> observer{nullptr};
  std::atomic<void*> observer_data{nullptr};
  std::atomic<EnqueueObserver> enqueue_observer{nullptr};
  std::atomic<void*> enqueue_observer_data{nullptr};
};

// The machine, created (and the profile loaded) on first use; never destroyed, so that worker
// threads and late calls from static destructors never see it torn down.
Machine& machine();
// machine() without initialising: nullptr when no CUDA call was ever made.
Machine* machineIfCreated();

// --- scheduler.cpp (all with Machine::mu held unless said otherwise) ---

// Resolves 0/cudaStreamLegacy/cudaStreamPerThread/user handles; nullptr when invalid.
Stream* resolveStream(Machine& m, cudaStream_t handle);
Stream& legacyStream(Machine& m, Device& d);
std::shared_ptr<Stream> newStream(Machine& m, Device& d, StreamKind kind, unsigned flags, int priority);
// enqueue(); with `current_device_only`, a stream of another device than the calling thread's
// current one is refused (CUDA's rule for kernel launches). Takes the lock itself.
cudaError_t enqueueOn(cudaStream_t stream, StreamOp&& op, bool current_device_only);
// Takes ownership of `op`; fills the dependencies that CUDA's default-stream rules imply.
cudaError_t enqueueLocked(Machine& m, Stream& s, cudaStream_t given, StreamOp&& op,
                          std::vector<Watch> watches = {}, std::shared_ptr<Event> event = {},
                          std::uint64_t event_gen = 0);
// How a host thread waits for the device, as cudaSetDeviceFlags' scheduling flags say:
// Spin sleeps until shortly before the awaited op's modelled end, then spins (CUDA's default,
// which keeps the host's view of the end precise); Block sleeps until woken.
enum class HostWait : std::uint8_t { Spin, Block };
HostWait hostWaitFor(const Device& d);

// Blocks (releasing the lock) until `s` has completed op `seq`.
void waitForSeq(std::unique_lock<std::mutex>& lock, Stream& s, std::uint64_t seq, HostWait how);
// For a host sync on `s`: s itself and, for the legacy stream, every blocking stream.
void synchronizeLocked(std::unique_lock<std::mutex>& lock, Machine& m, Stream& s);
bool queryLocked(Machine& m, Stream& s);
void retireStream(Stream& s);
// Joins workers that have finished (retired streams, after reset).
void reapStreams(Device& d);
// Drops pending work of every stream of the device and waits (bounded) for the workers.
void abandonDevice(std::unique_lock<std::mutex>& lock, Machine& m, Device& d);
// Something that bounds depend on changed: workers waiting on bounds look again.
void boundsMoved(Machine& m);

}  // namespace simgpu::detail

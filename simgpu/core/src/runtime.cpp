// The process-wide machine: creation from the profile, devices and the current device,
// per-thread default streams, device synchronisation and reset, and shutdown at exit.
#include "clock.hpp"
#include "machine.hpp"
#include "memory_registry.hpp"
#include "pool_registry.hpp"

#include <simgpu/core/memory.hpp>
#include <simgpu/core/runtime.hpp>
#include <simgpu/core/stream_op.hpp>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace simgpu {
namespace detail {
namespace {

constexpr int kMaxDevices = 64;  // profile.devices_per_process is validated against it

std::atomic<Machine*> g_machine{nullptr};
thread_local int t_current_device = 0;

// CUDA_DEVICE_MAX_CONNECTIONS, as CUDA takes it: a count of 1 to 32; anything else is said and
// the default kept.
std::size_t maxConnectionsFromEnvironment() {
  const char* text = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (text == nullptr || *text == '\0') return kDefaultMaxConnections;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 1 || value > static_cast<long>(kMostConnections)) {
    std::fprintf(stderr, "simgpu: CUDA_DEVICE_MAX_CONNECTIONS=%s is not a count of 1 to %zu; %zu used\n", text,
                 kMostConnections, kDefaultMaxConnections);
    return kDefaultMaxConnections;
  }
  return static_cast<std::size_t>(value);
}

Machine* createMachine() {
  auto* m = new Machine();  // never freed: see machine()
  m->max_connections = maxConnectionsFromEnvironment();
  const char* path = std::getenv("SIMGPU_PROFILE");
  if (path != nullptr && *path != '\0') {
    ProfileResult loaded = loadProfileFile(path);
    if (loaded.profile) {
      m->profile = std::move(*loaded.profile);
    } else {
      std::fprintf(stderr, "simgpu: %s\n", loaded.error.c_str());
      std::fprintf(stderr, "simgpu: every CUDA call fails with cudaErrorInitializationError\n");
      m->init_error = cudaErrorInitializationError;
      m->profile = builtinProfile();
    }
  } else {
    m->profile = builtinProfile();
  }
  for (int i = 0; i < m->profile.devices_per_process; ++i) {
    auto d = std::make_unique<Device>();
    d->index = i;
    d->connections.resize(m->max_connections);
    m->devices.push_back(std::move(d));
  }
  return m;
}

// The calling thread's per-thread default streams, retired when the thread exits.
struct PerThreadStreams {
  std::array<std::shared_ptr<Stream>, kMaxDevices> by_device;
  ~PerThreadStreams() {
    Machine* m = machineIfCreated();
    if (m == nullptr) return;
    std::lock_guard lock(m->mu);
    for (auto& s : by_device)
      if (s) retireStream(*s);
  }
};
thread_local PerThreadStreams t_per_thread;

Stream& perThreadStream(Machine& m, Device& d) {
  auto& slot = t_per_thread.by_device[static_cast<std::size_t>(d.index)];
  if (!slot || slot->abandon) slot = newStream(m, d, StreamKind::PerThreadDefault, cudaStreamDefault, 0);
  return *slot;
}

void shutdownMachine(Machine& m) {
  std::unique_lock lock(m.mu);
  m.exiting.store(true);
  for (auto& d : m.devices) abandonDevice(lock, m, *d);
}

// Destroyed at exit after the program's own static objects (libsimgpu is initialised before
// the program, so its exit handlers run after the program's): pending work is abandoned and
// workers are stopped while everything they use still exists.
struct ExitGuard {
  ExitGuard() = default;
  ExitGuard(const ExitGuard&) = delete;
  ExitGuard& operator=(const ExitGuard&) = delete;
  ~ExitGuard() {
    if (Machine* m = machineIfCreated()) shutdownMachine(*m);
  }
};
ExitGuard g_exit_guard;

}  // namespace

Machine& machine() {
  static Machine* const m = [] {
    Machine* created = createMachine();
    g_machine.store(created, std::memory_order_release);
    return created;
  }();
  return *m;
}

Machine* machineIfCreated() { return g_machine.load(std::memory_order_acquire); }

Stream* resolveStream(Machine& m, cudaStream_t handle) {
  Device& d = *m.devices[static_cast<std::size_t>(t_current_device)];
  if (handle == nullptr || handle == cudaStreamLegacy) return &legacyStream(m, d);
  if (handle == cudaStreamPerThread) return &perThreadStream(m, d);
  auto it = m.user_streams.find(reinterpret_cast<Stream*>(handle));
  return it == m.user_streams.end() ? nullptr : it->second.get();
}

}  // namespace detail

using detail::Machine;
using detail::machine;

cudaError_t initialize() {
  Machine& m = machine();
  if (m.init_error != cudaSuccess) return m.init_error;
  if (m.exiting.load()) return cudaErrorCudartUnloading;
  return cudaSuccess;
}

const Profile& profile() { return machine().profile; }

int deviceCount() { return static_cast<int>(machine().devices.size()); }

bool validDevice(int device) { return device >= 0 && device < deviceCount(); }

int currentDevice() { return detail::t_current_device; }

cudaError_t setCurrentDevice(int device) {
  if (!validDevice(device)) return cudaErrorInvalidDevice;
  detail::t_current_device = device;
  return cudaSuccess;
}

cudaError_t stickyError(int device) {
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  return m.devices[static_cast<std::size_t>(device)]->sticky;
}

cudaError_t synchronizeDevice(int device) {
  Machine& m = machine();
  std::unique_lock lock(m.mu);
  detail::Device& d = *m.devices[static_cast<std::size_t>(device)];
  std::vector<std::pair<std::shared_ptr<detail::Stream>, std::uint64_t>> targets;
  for (const auto& s : d.streams)
    if (!s->idle()) targets.emplace_back(s, s->enqueued);
  for (auto& [s, seq] : targets) detail::waitForSeq(lock, *s, seq, detail::hostWaitFor(d));
  detail::reapStreams(d);
  return d.sticky;
}

cudaError_t resetDevice(int device) {
  Machine& m = machine();
  std::unique_lock lock(m.mu);
  detail::Device& d = *m.devices[static_cast<std::size_t>(device)];
  d.resetting = true;
  detail::abandonDevice(lock, m, d);
  std::erase_if(m.user_streams, [&](const auto& item) { return item.second->device == &d; });
  std::erase_if(m.events, [&](const auto& item) { return item.second->device == &d; });
  d.streams.clear();
  d.legacy.reset();
  d.engine_holder = nullptr;
  d.engine_free_at = 0;
  d.engine_waiters.clear();
  d.running.clear();
  d.completed.clear();
  d.sticky = cudaSuccess;
  d.flags = 0;
  detail::freeDeviceAllocations(device);
  detail::resetPools(device);
  d.resetting = false;
  return cudaSuccess;
}

void memoryInfo(int device, std::size_t* free_bytes, std::size_t* total_bytes) {
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  const std::uint64_t total = m.profile.device.memory_bytes;
  const std::uint64_t used = deviceBytesInUse(device);
  *total_bytes = static_cast<std::size_t>(total);
  *free_bytes = static_cast<std::size_t>(used >= total ? 0 : total - used);
}

unsigned deviceFlags(int device) {
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  return m.devices[static_cast<std::size_t>(device)]->flags;
}

void setDeviceFlags(int device, unsigned flags) {
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  m.devices[static_cast<std::size_t>(device)]->flags = flags;
}

Stats stats() {
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  return m.stats;
}

int computeEngineWaiters(int device) {
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  return static_cast<int>(m.devices[static_cast<std::size_t>(device)]->engine_waiters.size());
}

void setOpObserver(OpObserver observer, void* user_data) {
  Machine& m = machine();
  m.observer_data.store(user_data, std::memory_order_release);
  m.observer.store(observer, std::memory_order_release);
}

void setEnqueueObserver(EnqueueObserver observer, void* user_data) {
  Machine& m = machine();
  m.enqueue_observer_data.store(user_data, std::memory_order_release);
  m.enqueue_observer.store(observer, std::memory_order_release);
}

std::uint64_t nextCorrelationId() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

bool shuttingDown(int device) {
  Machine* m = detail::machineIfCreated();
  if (m == nullptr) return false;
  if (m->exiting.load()) return true;
  std::lock_guard lock(m->mu);
  return device >= 0 && device < static_cast<int>(m->devices.size()) &&
         m->devices[static_cast<std::size_t>(device)]->resetting;
}

namespace detail {

cudaError_t enqueueOn(cudaStream_t stream, StreamOp&& op, bool current_device_only) {
  if (cudaError_t err = initialize(); err != cudaSuccess) return err;
  Machine& m = machine();
  std::lock_guard lock(m.mu);
  Stream* s = resolveStream(m, stream);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  if (current_device_only && s->device->index != t_current_device) return cudaErrorInvalidResourceHandle;
  return enqueueLocked(m, *s, stream, std::move(op));
}

}  // namespace detail

cudaError_t enqueue(cudaStream_t stream, StreamOp op) { return detail::enqueueOn(stream, std::move(op), false); }

}  // namespace simgpu

#include "arrival_floors.hpp"

#include "simgpu/core/stream_op.hpp"
#include "simgpu/nccl/futex.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace simgpu::nccl {
namespace {

// How often the publisher looks for requests: the delay a waiting peer may see between asking
// and learning the floor, against the publisher's wake-ups; slower while nobody asks.
constexpr auto kPollInterval = std::chrono::milliseconds(1);
constexpr auto kIdlePollInterval = std::chrono::milliseconds(5);

struct Source {
  Endpoint* endpoint;
  int device;
  std::uint64_t peer_group;
  std::uint64_t id;  // tells a source from a later one at the same address
};

// The registry takes its lock only around reading and writing the records, never around the
// device's scheduler: an endpoint may be removed (its communicator's last reference dropped) by
// a thread that holds the scheduler's lock.
class Publisher {
 public:
  void add(Endpoint& endpoint, int device, std::uint64_t peer_group) {
    std::lock_guard lock(mu_);
    sources_.push_back(Source{&endpoint, device, peer_group, ++next_id_});
    // Never joined: it runs as long as the process, whose exit it must not delay.
    if (!started_) std::thread([this] { loop(); }).detach();
    started_ = true;
  }
  void remove(const Endpoint& endpoint) {
    std::lock_guard lock(mu_);
    std::erase_if(sources_, [&](const Source& s) { return s.endpoint == &endpoint; });
  }

 private:
  void loop() {
    std::vector<Source> asked;
    for (;;) {
      std::this_thread::sleep_for(asked.empty() ? kIdlePollInterval : kPollInterval);
      const std::int64_t now = monotonicNowNs();
      asked.clear();
      {
        std::lock_guard lock(mu_);
        for (const Source& source : sources_) {
          const RankRecord& mine = source.endpoint->record(source.endpoint->rank());
          if (now - mine.floor_asked_ns.load(std::memory_order_relaxed) <= kFloorAskedForNs)
            asked.push_back(source);
        }
      }
      for (const Source& source : asked) {
        if (simgpu::shuttingDown(source.device)) continue;
        const std::int64_t floor = simgpu::peerGroupStartBound(source.device, source.peer_group);
        std::lock_guard lock(mu_);
        const bool still_there = std::any_of(sources_.begin(), sources_.end(), [&](const Source& s) { return s.id == source.id; });
        if (!still_there) continue;
        // Every floor published stays true (it bounds what was pending then and anything
        // enqueued since), so the record keeps the highest.
        RankRecord& mine = source.endpoint->record(source.endpoint->rank());
        if (floor <= mine.arrival_floor_ns.load(std::memory_order_relaxed)) continue;
        mine.arrival_floor_ns.store(floor, std::memory_order_release);
        source.endpoint->ringAllPeers();
      }
    }
  }

  std::mutex mu_;
  std::vector<Source> sources_;
  std::uint64_t next_id_ = 0;
  bool started_ = false;
};

Publisher& publisher() {
  static Publisher* const p = new Publisher();  // never freed: its thread outlives static destructors
  return *p;
}

}  // namespace

void publishArrivalFloors(Endpoint& endpoint, int device, std::uint64_t peer_group) {
  publisher().add(endpoint, device, peer_group);
}

void stopPublishingArrivalFloors(const Endpoint& endpoint) { publisher().remove(endpoint); }

}  // namespace simgpu::nccl

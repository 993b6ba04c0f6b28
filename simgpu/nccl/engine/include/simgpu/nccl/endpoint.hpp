// One rank's membership of a communicator: the mapped shared segment and the operations on
// it that are not a collective or point-to-point transfer themselves: joining, doorbells,
// the communicator-wide abort, peer liveness and a small host-side all-gather.
#pragma once

#include "simgpu/nccl/cost_model.hpp"
#include "simgpu/nccl/segment_layout.hpp"
#include "simgpu/nccl/shm_file.hpp"
#include "simgpu/nccl/status.hpp"
#include "simgpu/nccl/unique_id.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace simgpu::nccl {

struct RankIdentity {
  int device = 0;
  int host = 0;             // emulated host
  std::int64_t process = 0;  // OS process id
};

class Endpoint {
 public:
  // Joining is two steps so that one thread can join several ranks (devices) of one
  // communicator: attach maps the segment (creating it when this rank comes first) and
  // claims `rank` without waiting for anyone; awaitAllRanks then waits for the others.
  static Status attach(const CommKey& key, int nranks, int rank, const RankIdentity& self,
                       const Geometry& geometry, std::int64_t timeout_ns,
                       std::unique_ptr<Endpoint>* out);
  // Waits until every rank has attached, then reads their identities. Fails on a timeout,
  // a rank that died while joining, or two ranks on one device of one process.
  Status awaitAllRanks();
  // Marks this rank as gone (peers waiting for it fail at once) and unmaps the segment.
  ~Endpoint();

  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const SegmentLayout& layout() const { return layout_; }
  void* base() const { return file_.data(); }
  std::int64_t timeoutNs() const { return timeout_ns_; }
  std::string label() const;  // "communicator 1a2b3c4d", for messages
  // After awaitAllRanks: every rank's place, for the cost model.
  const std::vector<RankPlace>& places() const { return places_; }

  SegmentHeader& header() const { return *layout_.header(base()); }
  RankRecord& record(int r) const { return *layout_.rank(base(), r); }

  // Doorbells: a waiter reads doorbell(), re-checks its condition, then sleeps unless the
  // value changed; whoever changes something a peer may wait for rings that peer.
  std::uint32_t doorbell() const { return record(rank_).doorbell.load(); }
  void ring(int r) const;
  void ringAllPeers() const;
  void sleep(std::uint32_t seen, std::int64_t timeout_ns) const;

  // The communicator-wide failure, visible to every rank; the first caller's reason wins.
  void abortCommunicator(const Status& why) const;
  // ncclCommAbort on this rank: running and queued operations stop.
  void requestLocalAbort();
  // Success while healthy; otherwise why the communicator cannot be used.
  Status abortStatus() const;
  // Why rank r can no longer take part (it exited or left), or "" if it still can.
  std::string unreachableReason(int r) const;

  // Host-side all-gather of `bytes` (at most kBootstrapBytes) from every rank into `all`
  // (nranks * bytes, in rank order). Used by ncclCommSplit.
  Status allGatherSmall(const void* mine, std::size_t bytes, void* all);

  // Counters of this rank's transfers, touched only by the thread running its operations
  // (operations of one communicator rank run one at a time).
  std::uint64_t next_coll_step = 0;
  std::uint64_t coll_seq = 0;
  std::vector<std::uint64_t> sent_messages;      // per peer
  std::vector<std::uint64_t> received_messages;  // per peer

 private:
  Endpoint(const CommKey& key, int nranks, int rank, const Geometry& geometry, std::int64_t timeout_ns);

  CommKey key_;
  int rank_;
  int nranks_;
  SegmentLayout layout_;
  std::int64_t timeout_ns_;
  ShmFile file_;
  bool claimed_ = false;  // this rank's record is ours (and the segment has our layout)
  std::vector<RankPlace> places_;
  std::atomic<bool> local_abort_{false};
};

// Turns "nothing moves" into an error instead of a hang: no progress for the timeout, a
// communicator abort, or an awaited rank that exited.
class Watchdog {
 public:
  explicit Watchdog(std::int64_t timeout_ns);
  void progressed();
  // Call before the checks of one round of waiting: decides whether this round also checks
  // that the awaited processes are alive (that reads /proc, so it runs ten times a second).
  void startRound();
  // `what` names the operation and `awaited` the ranks it waits for, for the message.
  // An awaited rank found dead is only reported when a second look, with `awaited`
  // recomputed after the death was seen, still awaits it: the rank may have done its part
  // just before it exited. recheckNow() says that second look is due (without sleeping).
  Status check(const Endpoint& endpoint, std::span<const int> awaited, std::string_view what);
  bool recheckNow() const { return suspect_; }

 private:
  std::int64_t timeout_ns_;
  std::int64_t last_progress_ns_;
  std::int64_t next_liveness_check_ns_;
  bool check_liveness_ = true;
  bool suspect_ = false;     // this round saw an awaited rank dead
  bool confirming_ = false;  // this round is the second look
};

inline constexpr std::int64_t kDefaultTimeoutNs = 60'000'000'000;

// SIMGPU_NCCL_TIMEOUT_S (seconds, default 60): how long an operation may make no progress
// before it fails with ncclRemoteError. An unparsable value is an ncclInvalidArgument.
Status timeoutFromEnvironment(std::int64_t* timeout_ns);
// SIMGPU_NCCL_CHUNK_BYTES (bytes, default 0: the built-in geometry).
Status chunkBytesFromEnvironment(std::size_t* chunk_bytes);

std::string formatRanks(std::span<const int> ranks);  // "1, 3"

}  // namespace simgpu::nccl

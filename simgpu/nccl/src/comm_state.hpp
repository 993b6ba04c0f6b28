// One rank of a communicator as libnccl.so.2 holds it. The ncclComm_t handed to the program
// owns a shared reference; every operation enqueued on a stream holds another, so that the
// shared segment stays mapped until the last operation has run even after ncclCommDestroy.
#pragma once

#include "channels.hpp"
#include "issue_order.hpp"
#include "profiler.hpp"
#include "tuner_plugin.hpp"
#include "simgpu/core/stream_op.hpp"
#include "simgpu/nccl/cost_model.hpp"
#include "simgpu/nccl/endpoint.hpp"
#include "simgpu/nccl/status.hpp"
#include "simgpu/nccl/unique_id.hpp"

#include <nccl.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace simgpu::nccl {

// The parts of ncclConfig_t that change simgpu's behaviour; the rest (CTAs, net name, ...)
// only tune a real GPU's performance and are accepted and ignored.
struct CommConfig {
  bool blocking = true;
  std::string name;  // commName
};

// A reduction operator made by ncclRedOpCreatePreMulSum.
struct UserRedOp {
  bool live = false;
  ncclDataType_t datatype = ncclFloat32;
  std::array<unsigned char, 8> value{};  // ncclScalarHostImmediate
  const void* device_scalar = nullptr;   // ncclScalarDevice: read when the collective runs
};

// A buffer registered with ncclCommRegister (which speeds nothing up on simgpu, as on a
// machine where registration brings no gain, but keeps NCCL's bookkeeping and its errors).
struct Registration {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  int refs = 0;
};

struct JoinPlan {
  CommKey key;
  int nranks = 0;
  int rank = 0;
  int device = 0;
  int host = 0;
  CommConfig config;
  CostParams cost;
  ChannelPlan channels;
  std::int64_t timeout_ns = 0;
  std::size_t chunk_bytes = 0;
};

class CommState {
 public:
  explicit CommState(const JoinPlan& plan);
  // The last reference is gone (the handle and every operation): finalizes the rank's
  // tuner and profiler contexts, then leaves the communicator.
  ~CommState();
  CommState(const CommState&) = delete;
  CommState& operator=(const CommState&) = delete;

  // The plan is final once the init job attaches; ncclCommSplit fills it in on the job, after
  // the ranks have exchanged their colors.
  void setPlan(const JoinPlan& plan);
  const JoinPlan& plan() const { return plan_; }
  int rank() const { return plan_.rank; }
  int nranks() const { return plan_.nranks; }
  int device() const { return plan_.device; }

  // Joining, run by an init job (possibly on another thread): attach, then wait for peers.
  Status attach();
  Status awaitPeers();
  void finishInit(const Status& result);
  // Blocks until the init job finished; returns its result.
  Status waitInitialized();
  bool initializing() const { return async_.load() == ncclInProgress && !init_done_.load(); }

  Endpoint& endpoint() const { return *endpoint_; }  // once initialised

  // ncclCommGetAsyncError: ncclInProgress while joining (or finalizing without blocking),
  // then the first failure of this rank or of any peer, else ncclSuccess.
  ncclResult_t asyncError();
  // Why calls on this communicator cannot be accepted now (still joining, or failed).
  Status usable(const char* api);
  // Records the first failure (printed once); later ones are ignored.
  void recordFailure(const Status& why);
  std::string failureMessage();
  void setInProgress() { async_.store(ncclInProgress); }
  void clearInProgress() {
    ncclResult_t expected = ncclInProgress;
    async_.compare_exchange_strong(expected, ncclSuccess);
  }

  // ncclCommAbort: stops running and queued operations here and fails the communicator for
  // every peer.
  void abort();
  bool aborted() const { return aborted_.load(); }

  std::string label();  // "rank 1 of communicator 1a2b3c4d"

  IssueOrder order;
  // The same order for the step that times a collective ahead of its data (launch.cpp): the
  // arrival exchange of one collective after another, each rank in the communicator's order.
  IssueOrder timing_order;
  // NCCL runs a communicator's kernels one after another, also across streams: each launch
  // makes its stream wait for the communicator's previous launch (NCCL's strong streams). Where
  // the last launch is, for the next to wait for (launch.cpp), so that the device's model knows,
  // as a GPU does, that the next cannot start before the last has ended. Set under the launch
  // lock.
  simgpu::StreamPoint last_launch;
  // The profiler plugin's context for this rank (set when it joined; see profiler.hpp).
  RankProfiler profiler;
  // The tuner plugin's context for this rank (set when it joined; see tuner_plugin.hpp).
  RankTuner tuner;
  // Collectives issued so far per kind: the seqNumber of profiler Coll events (as NCCL's).
  std::array<std::atomic<std::uint64_t>, 8> issued_per_kind{};
  // The latest modelled end of an operation that ran (ncclCommFinalize waits for it).
  void noteModelEnd(std::int64_t end_ns);
  std::int64_t lastModelEnd() const { return last_model_end_ns_.load(); }
  std::uint64_t derived_comms = 0;  // ncclCommSplit/Shrink calls so far (API thread)

  std::mutex redop_mu;
  std::vector<UserRedOp> redops;
  std::mutex reg_mu;
  std::vector<std::unique_ptr<Registration>> registrations;

 private:
  JoinPlan plan_;
  std::unique_ptr<Endpoint> endpoint_;
  std::atomic<ncclResult_t> async_{ncclInProgress};
  std::atomic<bool> init_done_{false};
  std::atomic<bool> aborted_{false};
  std::atomic<std::int64_t> last_model_end_ns_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::string failure_;
};

}  // namespace simgpu::nccl

// The opaque type behind ncclComm_t.
struct ncclComm {
  static constexpr std::uint64_t kMagic = 0x73696d67707563ULL;  // "simgpuc"
  std::uint64_t magic = kMagic;
  std::shared_ptr<simgpu::nccl::CommState> state;
};

namespace simgpu::nccl {

// The state behind a handle, or nullptr with `why` filled (NULL or corrupted handle).
CommState* commFromHandle(ncclComm_t comm, const char* api, Status* why);

}  // namespace simgpu::nccl

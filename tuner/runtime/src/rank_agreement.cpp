#include "rank_agreement.hpp"

#include <algorithm>
#include <ctime>

#include "own_calls.hpp"
#include "syncopate/dispatch/tables.hpp"

namespace syncopate::preload {

bool RankAgreement::prepare() noexcept {
  const CudartHelpers* helpers = cudartHelpers();
  const CudartTable* real = realCudart();
  if (helpers == nullptr || real == nullptr) return false;
  OwnCall own;
  return real->cudaMalloc(reinterpret_cast<void**>(&device_), 2 * sizeof(std::uint64_t)) == cudaSuccess &&
         real->cudaMallocHost(reinterpret_cast<void**>(&host_), 2 * sizeof(std::uint64_t)) == cudaSuccess &&
         helpers->cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) == cudaSuccess &&
         helpers->cudaEventCreateWithFlags(&done_, cudaEventDisableTiming) == cudaSuccess;
}

RankAgreement::Outcome RankAgreement::agree(ncclComm_t twin, std::uint64_t digest, Watchdog& watchdog) noexcept {
  const CudartTable* real = realCudart();
  const NcclTable* nccl = realNccl();
  const CudartHelpers* helpers = cudartHelpers();
  const NcclHelpers* nccl_helpers = ncclHelpers();
  // The twin's own error: a peer that died or left fails it (real NCCL may never complete the
  // collective then; simgpu completes it as failed). Success or still initialising is no error.
  const auto twinError = [&] {
    ncclResult_t state = ncclSuccess;
    if (nccl_helpers == nullptr || nccl_helpers->ncclCommGetAsyncError == nullptr) return ncclSuccess;
    const ncclResult_t asked = nccl_helpers->ncclCommGetAsyncError(twin, &state);
    if (asked != ncclSuccess) return asked;
    return state == ncclInProgress ? ncclSuccess : state;
  };
  OwnCall own;
  host_[0] = digest;
  host_[1] = ~digest;
  const std::int64_t since = monotonicNowNs();
  watchdog.agreementStarted(since);
  real->cudaMemcpyAsync(device_, host_, 2 * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream_);
  // max(d) == d and max(~d) == ~d on every rank exactly when every rank passed d.
  Outcome outcome;
  outcome.failed = nccl->ncclAllReduce(device_, device_, 2, ncclUint64, ncclMax, twin, stream_);
  real->cudaMemcpyAsync(host_, device_, 2 * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream_);
  real->cudaEventRecord(done_, stream_);
  outcome.completion = cudaErrorNotReady;
  for (long pause = 2'000; outcome.failed == ncclSuccess; pause = std::min(pause * 2, 1'000'000L)) {
    outcome.completion = helpers->cudaEventQuery(done_);
    outcome.failed = twinError();
    if (outcome.completion != cudaErrorNotReady) break;
    timespec ts{0, pause};
    nanosleep(&ts, nullptr);
  }
  outcome.waited_ns = monotonicNowNs() - since;
  const bool completed = outcome.failed == ncclSuccess && outcome.completion == cudaSuccess;
  outcome.agreement = tuner::agreementOutcome(completed, digest, host_[0], host_[1]);
  if (outcome.agreement != tuner::Agreement::PeerFailed) {
    watchdog.agreementEnded();
    ++calls_;
    total_ns_ += outcome.waited_ns;
    max_ns_ = std::max(max_ns_, outcome.waited_ns);
  }
  return outcome;
}

}  // namespace syncopate::preload

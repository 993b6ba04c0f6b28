#include "comm_state.hpp"

#include "arrival_floors.hpp"
#include "log.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace simgpu::nccl {

CommState::CommState(const JoinPlan& plan) : plan_(plan) {}

CommState::~CommState() {
  finalizeTuner(tuner);
  if (profiler.context != nullptr) profilerPlugin()->finalize(profiler.context);
  if (endpoint_ != nullptr) stopPublishingArrivalFloors(*endpoint_);
}

namespace {

// Hands the joined rank to the profiler plugin, if there is one.
RankProfiler initProfiler(const JoinPlan& plan, const Endpoint& endpoint) {
  const ncclProfiler_v5_t* plugin = profilerPlugin();
  if (plugin == nullptr) return {};
  std::uint64_t comm_id = 0;
  std::memcpy(&comm_id, plan.key.bytes.data(), sizeof(comm_id));
  std::vector<int> hosts;
  for (const RankPlace& place : endpoint.places()) {
    if (std::find(hosts.begin(), hosts.end(), place.host) == hosts.end()) hosts.push_back(place.host);
  }
  RankProfiler out;
  if (plugin->init(&out.context, comm_id, &out.mask, plan.config.name.empty() ? nullptr : plan.config.name.c_str(),
                   static_cast<int>(hosts.size()), plan.nranks, plan.rank, profilerLogger()) != ncclSuccess) {
    return {};
  }
  return out;
}

}  // namespace

void CommState::setPlan(const JoinPlan& plan) {
  std::lock_guard lock(mu_);
  plan_ = plan;
}

std::string CommState::label() {
  std::lock_guard lock(mu_);
  std::string out = "rank " + std::to_string(plan_.rank) + " of communicator " + shortHex(plan_.key);
  if (!plan_.config.name.empty()) out += " (" + plan_.config.name + ")";
  return out;
}

Status CommState::attach() {
  const RankIdentity self{plan_.device, plan_.host, static_cast<std::int64_t>(getpid())};
  return Endpoint::attach(plan_.key, plan_.nranks, plan_.rank, self, makeGeometry(plan_.nranks, plan_.chunk_bytes),
                          plan_.timeout_ns, &endpoint_);
}

Status CommState::awaitPeers() { return endpoint_->awaitAllRanks(); }

void CommState::finishInit(const Status& result) {
  if (result.ok()) {
    profiler = initProfiler(plan_, *endpoint_);
    tuner = initTuner(TunerComm{&plan_.key, endpoint_->places(), &plan_.cost});
    publishArrivalFloors(*endpoint_, plan_.device, peerGroupOf(*this));
  }
  {
    std::lock_guard lock(mu_);
    if (!result.ok()) {
      failure_ = result.message;
      endpoint_.reset();
    }
    async_.store(result.code);
    init_done_.store(true);
  }
  cv_.notify_all();
  if (!result.ok()) fail(result);
}

Status CommState::waitInitialized() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return init_done_.load(); });
  if (endpoint_ == nullptr) return Status::error(async_.load(), failure_);
  return Status::success();
}

ncclResult_t CommState::asyncError() {
  const ncclResult_t current = async_.load();
  if (current != ncclSuccess) return current;
  // A peer's failure (a mismatch it found, its death, its abort) fails this rank too, even
  // while this rank has nothing running.
  if (Status st = endpoint_->abortStatus(); !st.ok()) {
    recordFailure(st);
    return async_.load();
  }
  return ncclSuccess;
}

Status CommState::usable(const char* api) {
  if (!init_done_.load()) {
    return Status::error(ncclInvalidUsage, std::string(api) + ": " + label() +
                                               " is still initialising (wait until ncclCommGetAsyncError returns ncclSuccess)");
  }
  const ncclResult_t state = asyncError();
  if (state == ncclSuccess || state == ncclInProgress) return Status::success();
  return Status::error(state, std::string(api) + ": " + label() + " has failed: " + failureMessage());
}

void CommState::recordFailure(const Status& why) {
  bool first = false;
  {
    std::lock_guard lock(mu_);
    ncclResult_t current = async_.load();
    if (current == ncclSuccess || current == ncclInProgress) {
      failure_ = why.message;
      async_.store(why.code);
      first = true;
    }
  }
  if (first) fail(why.code, "rank " + std::to_string(plan_.rank) + ": " + why.message);
}

std::string CommState::failureMessage() {
  std::lock_guard lock(mu_);
  return failure_;
}

void CommState::abort() {
  aborted_.store(true);
  if (endpoint_ != nullptr) {
    endpoint_->requestLocalAbort();
    endpoint_->abortCommunicator(
        Status::error(ncclRemoteError, "rank " + std::to_string(plan_.rank) + " aborted " + endpoint_->label() + " (ncclCommAbort)"));
  }
  order.wakeAll();
  timing_order.wakeAll();
}

void CommState::noteModelEnd(std::int64_t end_ns) {
  std::int64_t seen = last_model_end_ns_.load();
  while (seen < end_ns && !last_model_end_ns_.compare_exchange_weak(seen, end_ns)) {
  }
}

CommState* commFromHandle(ncclComm_t comm, const char* api, Status* why) {
  if (comm == nullptr) {
    *why = Status::error(ncclInvalidArgument, std::string(api) + ": comm argument is NULL");
    return nullptr;
  }
  if (comm->magic != ncclComm::kMagic || comm->state == nullptr) {
    *why = Status::error(ncclInvalidArgument, std::string(api) + ": corrupted comm object detected (destroyed or not a communicator)");
    return nullptr;
  }
  return comm->state.get();
}

}  // namespace simgpu::nccl

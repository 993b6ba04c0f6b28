#include "simgpu/nccl/collective_task.hpp"

#include "simgpu/nccl/datatype.hpp"

#include <algorithm>
#include <cstring>

namespace simgpu::nccl {
namespace {

// Kinds whose step carries one segment per rank (a rank's data differs per peer).
bool perPeerSegments(CollKind kind) {
  return kind == CollKind::ReduceScatter || kind == CollKind::AlltoAll || kind == CollKind::Scatter;
}

bool rooted(CollKind kind) {
  return kind == CollKind::Broadcast || kind == CollKind::Reduce || kind == CollKind::Gather ||
         kind == CollKind::Scatter;
}

bool reduces(CollKind kind) {
  return kind == CollKind::AllReduce || kind == CollKind::Reduce || kind == CollKind::ReduceScatter;
}

// An all-reduce step of at least this many bytes is split: each rank reduces one slice and
// then gathers the others' (n times less reduction work per rank, for one more rendezvous).
constexpr std::size_t kSplitStepBytes = 64 << 10;

// Rank r's slice of a step of `len` elements over n ranks.
std::size_t sliceBegin(std::size_t len, int n, int r) { return len * static_cast<std::size_t>(r) / static_cast<std::size_t>(n); }

}  // namespace

std::string describeCall(const CollDesc& desc) {
  const auto kind = static_cast<CollKind>(desc.kind);
  const char* count_name = kind == CollKind::AllGather ? "sendcount" : kind == CollKind::ReduceScatter ? "recvcount" : "count";
  std::string out = std::string(collKindName(kind)) + "(" + count_name + "=" + std::to_string(desc.count) + ", " +
                    datatypeName(static_cast<ncclDataType_t>(desc.datatype));
  if (reduces(kind)) out += std::string(", ") + (desc.premul != 0 ? "premulsum" : redOpName(static_cast<RedOp>(desc.op)));
  if (rooted(kind)) out += ", root=" + std::to_string(desc.root);
  return out + ")";
}

CollDesc collDescOf(const CollectiveArgs& args) {
  CollDesc desc;
  desc.count = args.count;
  desc.root = rooted(args.kind) ? args.root : -1;
  desc.kind = static_cast<std::uint8_t>(args.kind);
  desc.datatype = static_cast<std::uint8_t>(args.datatype);
  desc.op = reduces(args.kind) ? static_cast<std::uint8_t>(args.op) : 0;
  desc.premul = reduces(args.kind) && args.premul ? 1 : 0;
  return desc;
}

CollectiveTask::CollectiveTask(Endpoint& endpoint, const CollectiveArgs& args, const CostParams& cost)
    : endpoint_(endpoint),
      args_(args),
      cost_(cost),
      element_size_(datatypeSize(args.datatype)),
      inputs_(static_cast<std::size_t>(endpoint.nranks())) {
  desc_ = collDescOf(args);
  const std::size_t chunk = endpoint.layout().geometry().chunk_bytes;
  const std::size_t segments = perPeerSegments(args.kind) ? static_cast<std::size_t>(endpoint.nranks()) : 1;
  elements_per_step_ = chunk / (segments * element_size_);
  nsteps_ = (args.count + elements_per_step_ - 1) / elements_per_step_;
}

Status CollectiveTask::step(Progress* progress) {
  if (!started_) {
    // Steps are numbered per communicator; this collective takes the next nsteps_ of them.
    first_step_ = endpoint_.next_coll_step;
    endpoint_.next_coll_step += nsteps_;
    seq_ = endpoint_.coll_seq++;
    if (args_.premul && args_.scalar_device != nullptr) {
      std::memcpy(args_.scalar_value.data(), args_.scalar_device, element_size_);
    }
    started_ = true;
  }
  bool advanced = false;
  while (consumed_ < nsteps_) {
    // Two staging buffers: post at most one step ahead of what this rank has consumed.
    if (posted_ < nsteps_ && posted_ <= consumed_ + 1 && canPost()) {
      post();
      advanced = true;
    } else if (consumed_ < posted_ && !slice_reduced_ && canConsume()) {
      if (Status st = consume(); !st.ok()) return st;
      advanced = true;
    } else if (slice_reduced_ && allReduced()) {
      gatherSlices();
      advanced = true;
    } else {
      break;
    }
  }
  *progress = consumed_ == nsteps_ ? Progress::Done : advanced ? Progress::Advanced : Progress::Blocked;
  return Status::success();
}

// Step k reuses the buffer of step k-2: every rank must have consumed that one.
bool CollectiveTask::canPost() const {
  const std::uint64_t k = first_step_ + posted_;
  if (k < 2) return true;
  for (int r = 0; r < endpoint_.nranks(); ++r) {
    if (endpoint_.record(r).coll_consumed.load(std::memory_order_acquire) < k - 1) return false;
  }
  return true;
}

bool CollectiveTask::canConsume() const {
  const std::uint64_t k = first_step_ + consumed_;
  for (int r = 0; r < endpoint_.nranks(); ++r) {
    if (endpoint_.record(r).coll_posted.load(std::memory_order_acquire) < k + 1) return false;
  }
  return true;
}

bool CollectiveTask::allReduced() const {
  const std::uint64_t k = first_step_ + consumed_;
  for (int r = 0; r < endpoint_.nranks(); ++r) {
    if (endpoint_.record(r).coll_reduced.load(std::memory_order_acquire) < k + 1) return false;
  }
  return true;
}

bool CollectiveTask::splitStep() const {
  const std::size_t len = std::min(elements_per_step_, args_.count - consumed_ * elements_per_step_);
  return args_.kind == CollKind::AllReduce && endpoint_.nranks() > 1 && len * element_size_ >= kSplitStepBytes;
}

void CollectiveTask::awaitedRanks(std::vector<int>* ranks) const {
  const bool posting = posted_ == consumed_;
  const std::uint64_t k = first_step_ + (posting ? posted_ : consumed_);
  for (int r = 0; r < endpoint_.nranks(); ++r) {
    const RankRecord& rec = endpoint_.record(r);
    bool behind = false;
    if (posting) behind = k >= 2 && rec.coll_consumed.load() < k - 1;
    else if (slice_reduced_) behind = rec.coll_reduced.load() < k + 1;
    else behind = rec.coll_posted.load() < k + 1;
    if (behind) ranks->push_back(r);
  }
}

std::string CollectiveTask::describe() const {
  return describeCall(desc_) + " #" + std::to_string(seq_) + " on " + endpoint_.label();
}

void CollectiveTask::stage(const char* src, char* dst, std::size_t elements) const {
  if (args_.premul) {
    preMultiply(args_.datatype, src, dst, elements, args_.scalar_value.data());
  } else {
    std::memcpy(dst, src, elements * element_size_);
  }
}

void CollectiveTask::reduce(const char* const* inputs, char* out, std::size_t elements) const {
  const RedOp op = args_.premul ? RedOp::Sum : args_.op;
  reduceInRankOrder(args_.datatype, op, reinterpret_cast<const void* const*>(inputs), endpoint_.nranks(), out, elements);
}

void CollectiveTask::post() {
  const std::uint64_t k = first_step_ + posted_;
  const int buffer = static_cast<int>(k % kCollBuffers);
  const int rank = endpoint_.rank();
  CollStepHeader* header = endpoint_.layout().collHeader(endpoint_.base(), rank, buffer);
  header->desc = desc_;
  header->seq = seq_;
  header->step_in_op = posted_;
  header->arrival_ns = args_.arrival_ns;

  char* slot = endpoint_.layout().collData(endpoint_.base(), rank, buffer);
  const std::size_t es = element_size_;
  const std::size_t E = elements_per_step_;
  const std::size_t offset = posted_ * E;
  const std::size_t len = std::min(E, args_.count - offset);
  const auto* send = static_cast<const char*>(args_.send);
  switch (args_.kind) {
    case CollKind::AllReduce:
    case CollKind::Reduce:
      stage(send + offset * es, slot, len);
      break;
    case CollKind::Broadcast:
      if (rank == args_.root) std::memcpy(slot, send + offset * es, len * es);
      break;
    case CollKind::AllGather:
    case CollKind::Gather:
      std::memcpy(slot, send + offset * es, len * es);
      break;
    case CollKind::ReduceScatter:
    case CollKind::AlltoAll:
    case CollKind::Scatter:
      if (args_.kind == CollKind::Scatter && rank != args_.root) break;
      for (int q = 0; q < endpoint_.nranks(); ++q) {
        const char* src = send + (static_cast<std::size_t>(q) * args_.count + offset) * es;
        char* dst = slot + static_cast<std::size_t>(q) * E * es;
        if (args_.kind == CollKind::ReduceScatter) stage(src, dst, len);
        else std::memcpy(dst, src, len * es);
      }
      break;
  }
  endpoint_.record(rank).coll_posted.store(k + 1, std::memory_order_release);
  endpoint_.ringAllPeers();
  ++posted_;
}

Status CollectiveTask::consume() {
  const std::uint64_t k = first_step_ + consumed_;
  const int buffer = static_cast<int>(k % kCollBuffers);
  if (Status st = checkCallsMatch(k); !st.ok()) return st;
  if (consumed_ == 0) {
    for (int r = 0; r < endpoint_.nranks(); ++r) {
      last_arrival_ns_ = std::max(last_arrival_ns_, endpoint_.layout().collHeader(endpoint_.base(), r, buffer)->arrival_ns);
    }
  }
  if (splitStep()) {
    reduceOwnSlice();
    return Status::success();
  }
  const int n = endpoint_.nranks();
  const int rank = endpoint_.rank();
  const std::size_t es = element_size_;
  const std::size_t E = elements_per_step_;
  const std::size_t offset = consumed_ * E;
  const std::size_t len = std::min(E, args_.count - offset);
  // This rank's segment within each rank's slot (per-peer kinds), else the whole slot.
  const std::size_t segment = perPeerSegments(args_.kind) ? static_cast<std::size_t>(rank) * E * es : 0;
  for (int r = 0; r < n; ++r) {
    inputs_[static_cast<std::size_t>(r)] = endpoint_.layout().collData(endpoint_.base(), r, buffer) + segment;
  }
  auto* recv = static_cast<char*>(args_.recv);
  const auto* send = static_cast<const char*>(args_.send);
  switch (args_.kind) {
    case CollKind::AllReduce:
    case CollKind::ReduceScatter:
      reduce(inputs_.data(), recv + offset * es, len);
      break;
    case CollKind::Reduce:
      if (rank == args_.root) reduce(inputs_.data(), recv + offset * es, len);
      break;
    case CollKind::Broadcast:
      if (rank != args_.root) std::memcpy(recv + offset * es, inputs_[static_cast<std::size_t>(args_.root)], len * es);
      else if (send != recv) std::memcpy(recv + offset * es, send + offset * es, len * es);
      break;
    case CollKind::Scatter:
      std::memcpy(recv + offset * es, inputs_[static_cast<std::size_t>(args_.root)], len * es);
      break;
    case CollKind::AllGather:
    case CollKind::Gather:
    case CollKind::AlltoAll:
      if (args_.kind == CollKind::Gather && rank != args_.root) break;
      for (int q = 0; q < n; ++q) {
        std::memcpy(recv + (static_cast<std::size_t>(q) * args_.count + offset) * es, inputs_[static_cast<std::size_t>(q)], len * es);
      }
      break;
  }
  finishStep();
  return Status::success();
}

// This rank's slice of the step, reduced from every rank's buffer into its own (where only
// this rank reads that slice), then announced.
void CollectiveTask::reduceOwnSlice() {
  const std::uint64_t k = first_step_ + consumed_;
  const int buffer = static_cast<int>(k % kCollBuffers);
  const int n = endpoint_.nranks();
  const int rank = endpoint_.rank();
  const std::size_t len = std::min(elements_per_step_, args_.count - consumed_ * elements_per_step_);
  const std::size_t begin = sliceBegin(len, n, rank);
  const std::size_t end = sliceBegin(len, n, rank + 1);
  for (int r = 0; r < n; ++r) {
    inputs_[static_cast<std::size_t>(r)] = endpoint_.layout().collData(endpoint_.base(), r, buffer) + begin * element_size_;
  }
  reduce(inputs_.data(), endpoint_.layout().collData(endpoint_.base(), rank, buffer) + begin * element_size_, end - begin);
  endpoint_.record(rank).coll_reduced.store(k + 1, std::memory_order_release);
  endpoint_.ringAllPeers();
  slice_reduced_ = true;
}

// Every rank's reduced slice, from its buffer into the result.
void CollectiveTask::gatherSlices() {
  const std::uint64_t k = first_step_ + consumed_;
  const int buffer = static_cast<int>(k % kCollBuffers);
  const int n = endpoint_.nranks();
  const std::size_t es = element_size_;
  const std::size_t offset = consumed_ * elements_per_step_;
  const std::size_t len = std::min(elements_per_step_, args_.count - offset);
  auto* recv = static_cast<char*>(args_.recv);
  for (int r = 0; r < n; ++r) {
    const std::size_t begin = sliceBegin(len, n, r);
    const std::size_t end = sliceBegin(len, n, r + 1);
    std::memcpy(recv + (offset + begin) * es, endpoint_.layout().collData(endpoint_.base(), r, buffer) + begin * es,
                (end - begin) * es);
  }
  slice_reduced_ = false;
  finishStep();
}

void CollectiveTask::finishStep() {
  const std::uint64_t k = first_step_ + consumed_;
  RankRecord& self = endpoint_.record(endpoint_.rank());
  // A step that was not split counts as reduced too, so that the counter stays in step.
  if (self.coll_reduced.load() < k + 1) self.coll_reduced.store(k + 1, std::memory_order_release);
  self.coll_consumed.store(k + 1, std::memory_order_release);
  endpoint_.ringAllPeers();
  ++consumed_;
}

// Every rank sees the same headers, so a mismatch is found, with the same message, on all.
Status CollectiveTask::checkCallsMatch(std::uint64_t step) const {
  const int buffer = static_cast<int>(step % kCollBuffers);
  const int n = endpoint_.nranks();
  bool same = true;
  for (int r = 0; r < n && same; ++r) {
    const CollStepHeader* h = endpoint_.layout().collHeader(endpoint_.base(), r, buffer);
    same = h->desc == desc_ && h->seq == seq_ && h->step_in_op == consumed_;
  }
  if (same) return Status::success();
  // Group the ranks by what they called, in order of their lowest rank.
  std::vector<std::pair<std::string, std::vector<int>>> calls;
  for (int r = 0; r < n; ++r) {
    const CollStepHeader* h = endpoint_.layout().collHeader(endpoint_.base(), r, buffer);
    std::string call = describeCall(h->desc) + " as collective #" + std::to_string(h->seq);
    auto it = std::find_if(calls.begin(), calls.end(), [&](const auto& c) { return c.first == call; });
    if (it == calls.end()) calls.push_back({std::move(call), {r}});
    else it->second.push_back(r);
  }
  std::string message = "mismatched collectives on " + endpoint_.label() + ": ";
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (i > 0) message += i + 1 == calls.size() ? " but " : "; ";
    message += "rank(s) " + formatRanks(calls[i].second) + " called " + calls[i].first;
  }
  return Status::error(ncclInvalidUsage, message);
}

void CollectiveTask::appendTiming(std::vector<TaskTiming>* timings) const {
  if (nsteps_ == 0) return;
  const std::size_t bytes = collectiveBytes(args_.kind, args_.count, element_size_, endpoint_.nranks());
  timings->push_back(TaskTiming{last_arrival_ns_, collectiveDurationNs(cost_, args_.kind, bytes, endpoint_.places(), args_.channels), -1});
}

}  // namespace simgpu::nccl

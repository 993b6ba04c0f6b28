#include "simgpu/nccl/p2p_task.hpp"

#include "simgpu/nccl/datatype.hpp"

#include <algorithm>
#include <cstring>

namespace simgpu::nccl {

P2pTask::P2pTask(Endpoint& endpoint, const P2pArgs& args, const CostParams& cost)
    : endpoint_(endpoint), args_(args), cost_(cost), bytes_(args.count * datatypeSize(args.datatype)) {
  const std::size_t slot = endpoint.layout().geometry().p2p_slot_bytes;
  // An empty message still travels as one chunk, so that it is matched like any other.
  nchunks_ = std::max<std::uint64_t>(1, (bytes_ + slot - 1) / slot);
}

bool P2pTask::done() const { return args_.is_send ? acknowledged_ : moved_ == nchunks_; }

Status P2pTask::step(Progress* progress) {
  const int self = endpoint_.rank();
  if (!started_) {
    const int src = args_.is_send ? self : args_.peer;
    const int dst = args_.is_send ? args_.peer : self;
    PairQueue* queue = endpoint_.layout().pair(endpoint_.base(), src, dst);
    const auto peer = static_cast<std::size_t>(args_.peer);
    if (args_.is_send) {
      message_ = endpoint_.sent_messages[peer]++;
      first_ = queue->head.load();  // this rank is the only writer of head
    } else {
      message_ = endpoint_.received_messages[peer]++;
      first_ = queue->tail.load();  // this rank is the only writer of tail
    }
    started_ = true;
  }
  bool advanced = false;
  Status st = args_.is_send ? stepSend(&advanced) : stepRecv(&advanced);
  if (!st.ok()) return st;
  *progress = done() ? Progress::Done : advanced ? Progress::Advanced : Progress::Blocked;
  return Status::success();
}

Status P2pTask::stepSend(bool* advanced) {
  const int self = endpoint_.rank();
  const SegmentLayout& layout = endpoint_.layout();
  PairQueue* queue = layout.pair(endpoint_.base(), self, args_.peer);
  const std::size_t slot_bytes = layout.geometry().p2p_slot_bytes;
  while (moved_ < nchunks_) {
    const std::uint64_t position = first_ + moved_;
    if (position - queue->tail.load(std::memory_order_acquire) >= static_cast<std::uint64_t>(kP2pSlots)) break;
    const int slot = static_cast<int>(position % kP2pSlots);
    P2pSlotHeader* header = layout.p2pHeader(endpoint_.base(), self, args_.peer, slot);
    const std::size_t offset = moved_ * slot_bytes;
    const std::size_t nbytes = std::min(slot_bytes, bytes_ - std::min(bytes_, offset));
    header->message = message_;
    header->count = args_.count;
    header->datatype = static_cast<std::uint32_t>(args_.datatype);
    header->chunk = static_cast<std::uint32_t>(moved_);
    header->nchunks = static_cast<std::uint32_t>(nchunks_);
    header->offset = offset;
    header->nbytes = nbytes;
    header->send_arrival_ns = args_.arrival_ns;
    if (nbytes > 0) {
      std::memcpy(layout.p2pData(endpoint_.base(), self, args_.peer, slot),
                  static_cast<const char*>(args_.send) + offset, nbytes);
    }
    queue->head.store(position + 1, std::memory_order_release);
    endpoint_.ring(args_.peer);
    ++moved_;
    *advanced = true;
  }
  if (moved_ == nchunks_ && !acknowledged_ &&
      queue->tail.load(std::memory_order_acquire) >= first_ + nchunks_) {
    // The receiver wrote its arrival before it consumed our first chunk.
    peer_arrival_ns_ = queue->recv_arrival_ns;
    acknowledged_ = true;
    *advanced = true;
  }
  return Status::success();
}

Status P2pTask::stepRecv(bool* advanced) {
  const int self = endpoint_.rank();
  const SegmentLayout& layout = endpoint_.layout();
  PairQueue* queue = layout.pair(endpoint_.base(), args_.peer, self);
  while (moved_ < nchunks_) {
    const std::uint64_t position = first_ + moved_;
    if (queue->head.load(std::memory_order_acquire) <= position) break;
    const int slot = static_cast<int>(position % kP2pSlots);
    const P2pSlotHeader* header = layout.p2pHeader(endpoint_.base(), args_.peer, self, slot);
    if (header->message != message_ || header->count != args_.count ||
        header->datatype != static_cast<std::uint32_t>(args_.datatype) || header->chunk != moved_ ||
        header->nchunks != nchunks_) {
      return Status::error(
          ncclInvalidUsage,
          "mismatched send/recv on " + endpoint_.label() + ": rank " + std::to_string(args_.peer) + " sent message #" +
              std::to_string(header->message) + " to rank " + std::to_string(self) + " as count=" +
              std::to_string(header->count) + " " + datatypeName(static_cast<ncclDataType_t>(header->datatype)) +
              ", but rank " + std::to_string(self) + " posted receive #" + std::to_string(message_) + " from rank " +
              std::to_string(args_.peer) + " of count=" + std::to_string(args_.count) + " " +
              datatypeName(args_.datatype));
    }
    if (moved_ == 0) {
      peer_arrival_ns_ = header->send_arrival_ns;
      queue->recv_arrival_ns = args_.arrival_ns;
    }
    if (header->nbytes > 0) {
      std::memcpy(static_cast<char*>(args_.recv) + header->offset,
                  layout.p2pData(endpoint_.base(), args_.peer, self, slot), header->nbytes);
    }
    queue->tail.store(position + 1, std::memory_order_release);
    endpoint_.ring(args_.peer);
    ++moved_;
    *advanced = true;
  }
  return Status::success();
}

void P2pTask::awaitedRanks(std::vector<int>* ranks) const { ranks->push_back(args_.peer); }

std::string P2pTask::describe() const {
  return std::string(args_.is_send ? "Send" : "Recv") + "(count=" + std::to_string(args_.count) + ", " +
         datatypeName(args_.datatype) + ", peer=" + std::to_string(args_.peer) + ") on " + endpoint_.label();
}

void P2pTask::appendTiming(std::vector<TaskTiming>* timings) const {
  const auto& places = endpoint_.places();
  const LinkLevel level = linkLevel(places[static_cast<std::size_t>(endpoint_.rank())],
                                    places[static_cast<std::size_t>(args_.peer)]);
  const int lane = args_.peer * 2 + (args_.is_send ? 0 : 1);
  timings->push_back(TaskTiming{std::max(args_.arrival_ns, peer_arrival_ns_), p2pDurationNs(cost_, bytes_, level), lane});
}

}  // namespace simgpu::nccl

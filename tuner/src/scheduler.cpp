#include "syncopate/tuner/scheduler.hpp"

#include <algorithm>

#include "syncopate/trace/hash.hpp"

namespace syncopate::tuner {

namespace {

// Handles are never 0 in the lookup tables (0 marks an empty slot; the legacy stream is never
// looked up and CUDA events are never null).
template <class Entry>
Entry* probe(std::vector<Entry>& table, std::uint64_t handle) {
  const std::size_t mask = table.size() - 1;
  std::size_t i = static_cast<std::size_t>(trace::mix64(handle)) & mask;
  for (std::size_t n = 0; n < table.size(); ++n, i = (i + 1) & mask) {
    if (table[i].key == handle || table[i].key == 0) return &table[i];
  }
  return nullptr;
}

std::size_t powerOfTwoAtLeast(std::size_t n) {
  std::size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

Call callOf(const HeldCollective& h) {
  Call c;
  c.kind = CallKind::Collective;
  c.id = h.call_id;
  c.stream = h.stream;
  c.collective = h.args;
  return c;
}

bool sameReduction(const CollectiveArgs& a, const CollectiveArgs& b) {
  return a.comm == b.comm && a.dtype == b.dtype && a.op == b.op && a.type == b.type;
}

}  // namespace

Scheduler::Scheduler(const ScheduleRules& rules, Executor& executor, const SchedulerLimits& limits)
    : rules_(rules), exec_(executor), limits_(limits) {
  const std::size_t s = limits_.streams;
  streams_.resize(s);
  stream_table_.resize(powerOfTwoAtLeast(2 * s));
  vc_.assign(s * s, 0);
  host_vc_.assign(s, 0);
  events_.resize(limits_.app_events);
  event_table_.resize(powerOfTwoAtLeast(2 * static_cast<std::size_t>(limits_.app_events)));
  event_vc_.assign(static_cast<std::size_t>(limits_.app_events) * s, 0);
  tensors_.reserve(limits_.tensors);
  tensor_order_.reserve(limits_.tensors);
  free_tensors_.reserve(limits_.tensors);
  touch_seq_.assign(static_cast<std::size_t>(limits_.tensors) * s, 0);
  scratch_.reserve(limits_.tensors);
  scratch_mark_.assign(limits_.tensors, 0);
  held_.reserve(limits_.held);
  held_meta_.reserve(limits_.held);
  touch_gen_.assign(limits_.touch_events, 0);
  unit_seq_.assign(limits_.units, 0);
  unit_stream_.assign(limits_.units, 0);

  position_base_ = 0;
  unit_base_ = position_base_ + limits_.held;
  join_slot_ = unit_base_ + limits_.units;
  touch_base_ = join_slot_ + 1;
  const std::uint32_t slots = touch_base_ + limits_.touch_events;
  slot_waited_.assign(slots, 0);
  if (!exec_.prepareEvents(slots)) {
    Call none;
    disable(Fallback::CapacityExceeded, none);
    return;
  }
  comm_stream_ = streamIndex(exec_.communicationStream());
  join_stream_ = streamIndex(exec_.joinStream());
}

// --- tables ----------------------------------------------------------------------------------

std::uint32_t Scheduler::streamIndex(StreamHandle handle) {
  // The table's empty key is 0, the legacy stream's handle: it is kept under another.
  constexpr std::uint64_t kLegacyStreamKey = ~std::uint64_t{0};
  const std::uint64_t key = handle == kLegacyStream ? kLegacyStreamKey : handle;
  TableEntry* e = probe(stream_table_, key);
  if (e == nullptr) return kNone;
  if (e->key == key) return e->index;
  if (used_streams_ == limits_.streams) return kNone;
  e->key = key;
  e->index = used_streams_++;
  streams_[e->index].handle = handle;
  return e->index;
}

Scheduler::AppEvent* Scheduler::appEvent(std::uint64_t handle, bool create) {
  if (handle == 0) return nullptr;
  TableEntry* e = probe(event_table_, handle);
  if (e == nullptr) return nullptr;
  if (e->key == handle) return &events_[e->index];
  if (!create || used_events_ == limits_.app_events) return nullptr;
  e->key = handle;
  e->index = used_events_++;
  return &events_[e->index];
}

void Scheduler::findTouched(const Touch& touch) {
  if (tensor_order_.empty()) return;
  const std::uint64_t lo = touch.address;
  const std::uint64_t hi = touch.bytes == 0 ? lo + 1 : lo + touch.bytes;
  // The first tensor that could reach `lo`: the last one starting at or before it.
  auto it = std::upper_bound(tensor_order_.begin(), tensor_order_.end(), lo,
                             [&](std::uint64_t v, std::uint32_t t) { return v < tensors_[t].begin; });
  if (it != tensor_order_.begin()) --it;
  for (; it != tensor_order_.end() && tensors_[*it].begin < hi; ++it) {
    const Tensor& t = tensors_[*it];
    if (t.end <= lo) continue;
    if (scratch_mark_[*it] == lookups_) continue;
    scratch_mark_[*it] = lookups_;
    scratch_.push_back(*it);
  }
}

std::uint32_t Scheduler::tensorFor(std::uint64_t begin, std::uint64_t end, const Call& call) {
  startLookup();
  findTouched({begin, end - begin});
  if (scratch_.size() == 1 && tensors_[scratch_[0]].begin == begin && tensors_[scratch_[0]].end == end) {
    return scratch_[0];
  }
  // Buffers whose collectives every stream has waited for need no following any more: they
  // leave the table instead of widening the new buffer (which would make whatever touches any
  // of that memory wait for, or flush, what the new one holds).
  std::erase_if(scratch_, [&](std::uint32_t t) {
    const Tensor& x = tensors_[t];
    if (x.held || !settled(x.wait_units)) return false;
    std::erase(tensor_order_, t);
    free_tensors_.push_back(t);
    ++stats_.buffers_retired;
    return true;
  });
  if (scratch_.size() == 1 && tensors_[scratch_[0]].begin <= begin && end <= tensors_[scratch_[0]].end) {
    return scratch_[0];
  }
  std::uint64_t wait_units = 0;
  if (!scratch_.empty()) {
    // The memory holds a buffer of another extent now: an allocator handed it out again
    // (FSDP's gathered parameters, a caching allocator's blocks). What is held there is issued
    // first; the buffers it meets become one with it, their union, which inherits their
    // deferred waits, so whatever touches any of that memory still waits for the collectives
    // in flight there. Its producer is unproven (its last touch was another buffer's), so its
    // next collective waits for its position.
    if (std::any_of(scratch_.begin(), scratch_.end(), [&](std::uint32_t t) { return tensors_[t].held; })) {
      flush();  // leaves scratch_ as it is
      if (mode_ == Mode::Disabled) return kNone;
    }
    for (const std::uint32_t t : scratch_) {
      begin = std::min(begin, tensors_[t].begin);
      end = std::max(end, tensors_[t].end);
      wait_units = std::max(wait_units, tensors_[t].wait_units);
      std::erase(tensor_order_, t);
      free_tensors_.push_back(t);
    }
    ++stats_.buffers_merged;
  }
  std::uint32_t index = kNone;
  if (!free_tensors_.empty()) {
    index = free_tensors_.back();
    free_tensors_.pop_back();
    std::fill_n(&touchSeq(index, 0), limits_.streams, 0u);
  } else if (tensors_.size() < limits_.tensors) {
    // First sight of a buffer: the one place the tensor table grows (within its reservation).
    index = static_cast<std::uint32_t>(tensors_.size());
    tensors_.emplace_back();
  } else {
    disable(Fallback::CapacityExceeded, call);
    return kNone;
  }
  Tensor& t = tensors_[index];
  t = Tensor{};
  t.begin = begin;
  t.end = end;
  t.wait_units = wait_units;
  auto pos = std::upper_bound(tensor_order_.begin(), tensor_order_.end(), begin,
                              [&](std::uint64_t v, std::uint32_t x) { return v < tensors_[x].begin; });
  tensor_order_.insert(pos, index);
  return index;
}

// --- ordering helpers --------------------------------------------------------------------------

std::uint64_t Scheduler::waitedUnits(std::uint32_t stream) const {
  return std::max(streams_[stream].waited_units, host_waited_units_);
}

void Scheduler::mergeHostClock(std::uint32_t stream) {
  StreamState& st = streams_[stream];
  if (st.host_epoch == host_epoch_) return;
  st.host_epoch = host_epoch_;
  std::uint32_t* c = clock(stream);
  for (std::uint32_t j = 0; j < used_streams_; ++j) c[j] = std::max(c[j], host_vc_[j]);
}

void Scheduler::waitForUnits(std::uint32_t stream, std::uint64_t units) {
  if (units == 0 || waitedUnits(stream) >= units) return;
  const std::uint64_t last = units - 1;
  exec_.waitEvent(streams_[stream].handle, unitSlot(last));
  streams_[stream].waited_units = units;
  const std::size_t k = static_cast<std::size_t>(last % limits_.units);
  std::uint32_t& c = clock(stream)[unit_stream_[k]];
  c = std::max(c, unit_seq_[k]);
  ++stats_.deferred_waits;
}

std::pair<EventSlot, std::uint32_t> Scheduler::nextTouchEvent() {
  const std::uint32_t k = next_touch_;
  next_touch_ = (next_touch_ + 1) % limits_.touch_events;
  return {touch_base_ + k, ++touch_gen_[k]};
}

void Scheduler::recordTouch(std::uint32_t tensor, std::uint32_t stream, EventSlot slot, std::uint32_t gen) {
  Tensor& t = tensors_[tensor];
  touchSeq(tensor, stream) = streams_[stream].seq;
  // The last touch proves the producer only if it follows every other access to the buffer
  // (and every op of unknown effect) on every other stream.
  bool dominated = true;
  const std::uint32_t* c = clock(stream);
  for (std::uint32_t j = 0; j < used_streams_ && dominated; ++j) {
    if (j == stream) continue;
    dominated = c[j] >= std::max(touchSeq(tensor, j), streams_[j].barrier_seq);
  }
  t.dominated = dominated;
  t.last_touch_stream = stream;
  t.last_touch_pc = pc_;
  t.touch_slot = slot;
  t.touch_gen = gen;
}

bool Scheduler::producerProven(const Tensor& t, std::uint32_t stream) const {
  return t.last_touch_stream == stream && t.dominated && t.last_touch_pc > last_barrier_pc_ &&
         t.touch_slot != kNone && touch_gen_[t.touch_slot - touch_base_] == t.touch_gen;
}

void Scheduler::fallback(Fallback why, const Call& call) {
  ++stats_.fallbacks[static_cast<std::size_t>(why)];
  exec_.fallback(why, call);
}

void Scheduler::drainAll() {
  for (std::uint32_t s = 0; s < used_streams_; ++s) {
    if (s == comm_stream_ || s == join_stream_) continue;
    if (streams_[s].origin_units > 0 || waitedUnits(s) < units_) waitForUnits(s, units_);
  }
}

void Scheduler::disable(Fallback why, const Call& call) {
  if (mode_ == Mode::Disabled) return;
  mode_ = Mode::Disabled;  // first: the executor hears why with the plan already off
  stats_.disabled = true;
  fallback(why, call);
  if (!held_.empty()) {
    issueInOrder();
    held_.clear();
    held_meta_.clear();
  }
  blocking_held_ = false;
  drainAll();
}

// --- calls -------------------------------------------------------------------------------------

void Scheduler::onCall(const Call& call) {
  ++pc_;
  ++stats_.calls;
  if (call.kind == CallKind::Kernel) ++stats_.launches;
  if (mode_ == Mode::Disabled) {
    exec_.passthrough(call);
    return;
  }
  if (capturing_) {
    exec_.passthrough(call);
    if (call.kind == CallKind::CaptureEnd) {
      capturing_ = false;
      last_barrier_pc_ = pc_;  // what was captured runs later, touching who knows what
    }
    return;
  }
  switch (call.kind) {
    case CallKind::Kernel:
    case CallKind::Memcpy:
    case CallKind::Memset: onOp(call); break;
    case CallKind::Collective: onCollective(call); break;
    case CallKind::EventRecord: onEventRecord(call); break;
    case CallKind::StreamWait: onStreamWait(call); break;
    case CallKind::StreamSync:
    case CallKind::EventSync:
    case CallKind::DeviceSync:
    case CallKind::StreamQuery:
    case CallKind::EventQuery: onHostSync(call); break;
    case CallKind::Barrier: onBarrier(call, Fallback::UnknownApi); break;
    case CallKind::CaptureBegin:
      flush();
      if (mode_ == Mode::Active) {
        drainAll();
        fallback(Fallback::GraphCapture, call);
        capturing_ = true;
      }
      exec_.passthrough(call);
      break;
    case CallKind::CaptureEnd:
      exec_.passthrough(call);
      last_barrier_pc_ = pc_;
      break;
    case CallKind::GroupBegin:
      flush();
      exec_.passthrough(call);
      ++nccl_group_depth_;
      break;
    case CallKind::GroupEnd:
      exec_.passthrough(call);
      if (nccl_group_depth_ > 0) --nccl_group_depth_;
      break;
    case CallKind::CommEnd:
      finish();
      exec_.passthrough(call);
      break;
  }
}

void Scheduler::finish() {
  flush();
  if (units_ > host_waited_units_) {
    exec_.hostWait(unitSlot(units_ - 1));
    host_waited_units_ = units_;
  }
}

// The legacy default stream is an ordinary stream to the schedule unless collectives the program
// issued on blocking streams are held or redirected: CUDA orders a legacy-stream op after the
// work of every blocking stream, and the runtime's own streams are non-blocking, so the op must
// then wait for those units itself. PyTorch issues its compute on the legacy stream and its
// collectives on non-blocking streams: its ops never wait.
bool Scheduler::legacyMustWait() {
  if (blocking_held_) return true;
  if (blocking_units_ == 0) return false;
  const std::uint32_t s = streamIndex(kLegacyStream);
  return s == kNone || waitedUnits(s) < blocking_units_;
}

void Scheduler::onOp(const Call& call) {
  const bool launch = call.kind == CallKind::Kernel;
  if (call.stream == kLegacyStream && legacyMustWait()) {
    if (launch) ++stats_.barrier_launches;
    onBarrier(call, Fallback::LegacyStream);
    return;
  }
  if (launch && call.unknown_pointers) {
    ++stats_.barrier_launches;
    onBarrier(call, Fallback::UnknownParameterLayout);
    return;
  }
  issueOp(call, call.touches);
}

void Scheduler::issueOp(const Call& call, std::span<const Touch> touches) {
  const std::uint32_t s = streamIndex(call.stream);
  if (s == kNone) {
    disable(Fallback::CapacityExceeded, call);
    exec_.passthrough(call);
    return;
  }
  startLookup();
  for (const Touch& t : touches) findTouched(t);
  const bool needs_flush = std::any_of(scratch_.begin(), scratch_.end(), [&](std::uint32_t t) { return tensors_[t].held; });
  if (needs_flush) {
    // flush() reuses scratch_ only through tensorFor(), which it never calls; keep ours.
    flush();
    if (mode_ == Mode::Disabled) {
      exec_.passthrough(call);
      return;
    }
  }
  mergeHostClock(s);
  for (std::uint32_t t : scratch_) waitForUnits(s, tensors_[t].wait_units);
  exec_.passthrough(call);
  StreamState& st = streams_[s];
  clock(s)[s] = ++st.seq;
  if (!scratch_.empty()) {
    const auto [slot, gen] = nextTouchEvent();
    exec_.recordEvent(slot, call.stream);
    for (std::uint32_t t : scratch_) recordTouch(t, s, slot, gen);
  }
  if (call.synchronous) {
    // The host waited for this op, hence for everything its stream follows.
    for (std::uint32_t j = 0; j < used_streams_; ++j) host_vc_[j] = std::max(host_vc_[j], clock(s)[j]);
    host_waited_units_ = std::max(host_waited_units_, waitedUnits(s));
    ++host_epoch_;
  }
}

void Scheduler::onCollective(const Call& call) {
  if (call.stream == kLegacyStream) {
    onBarrier(call, Fallback::LegacyStream);
    return;
  }
  const CollectiveArgs& a = call.collective;
  const bool holdable =
      rescheduled(a.type) && nccl_group_depth_ == 0 && a.count > 0 && trace::dataTypeSize(a.dtype) > 0;
  if (holdable) {
    hold(call);
    return;
  }
  if (nccl_group_depth_ > 0) fallback(Fallback::NcclGroup, call);
  // Any other collective keeps its place: an op that touches its buffers.
  flush();
  if (mode_ == Mode::Disabled) {
    exec_.passthrough(call);
    return;
  }
  const Touch touches[2] = {{a.send, a.send_bytes()}, {a.recv, a.recv_bytes()}};
  issueOp(call, touches);
}

void Scheduler::hold(const Call& call) {
  const CollectiveArgs& a = call.collective;
  const std::uint32_t s = streamIndex(call.stream);
  if (s == kNone) {
    disable(Fallback::CapacityExceeded, call);
    exec_.passthrough(call);
    return;
  }
  // In place, one buffer holds the other (an all-reduce's are the same; a reduce-scatter's
  // result is the rank's own slice of its input, an all-gather's input the rank's own slice of
  // its result): one tensor, the larger range.
  const std::uint64_t send_end = a.send + a.send_bytes(), recv_end = a.recv + a.recv_bytes();
  const bool recv_inside = a.recv >= a.send && recv_end <= send_end;
  const bool send_inside = a.send >= a.recv && send_end <= recv_end;
  std::uint32_t send = kNone, recv = kNone;
  if (!recv_inside && !send_inside && a.send < recv_end && a.recv < send_end) {
    // Neither buffer holds the other, yet they meet: no NCCL call is defined on that.
    disable(Fallback::OverlappingBuffer, call);
    exec_.passthrough(call);
    return;
  }
  if (recv_inside) {
    send = recv = tensorFor(a.send, send_end, call);
  } else if (send_inside) {
    send = recv = tensorFor(a.recv, recv_end, call);
  } else {
    send = tensorFor(a.send, send_end, call);
    recv = send == kNone ? kNone : tensorFor(a.recv, recv_end, call);
    // The receive buffer's union may have taken in the send buffer's tensor: look it up again.
    if (recv != kNone && recv != send) send = tensorFor(a.send, send_end, call);
  }
  if (send == kNone || recv == kNone) {  // tensorFor disabled the plan
    exec_.passthrough(call);
    return;
  }
  if (tensors_[send].held || tensors_[recv].held) {
    flush();
    if (mode_ == Mode::Disabled) {
      exec_.passthrough(call);
      return;
    }
  }
  const auto n = static_cast<std::uint32_t>(held_.size());
  const EventSlot position = position_base_ + n;
  // The call's position is only needed when its producers cannot be proven (then the bucket
  // waits for everything issued before it on its stream).
  const bool proven = rules_.communication_stream && producerProven(tensors_[send], s) && producerProven(tensors_[recv], s);
  if (!proven) exec_.recordEvent(position, call.stream);
  held_.push_back({a, call.stream, call.id});
  blocking_held_ = blocking_held_ || call.blocking_stream;
  held_meta_.push_back({s, send, recv, position, !proven, 0});
  tensors_[send].held = true;
  tensors_[recv].held = true;
  ++stats_.held;
  if (held_.size() == limits_.held) flush();
}

void Scheduler::onEventRecord(const Call& call) {
  flush();
  if (mode_ == Mode::Disabled) {
    exec_.passthrough(call);
    return;
  }
  if (call.stream == kLegacyStream && legacyMustWait()) {
    // The legacy stream's event covers every blocking stream; redirected work is on a
    // non-blocking one, so make every stream wait for it first.
    fallback(Fallback::LegacyStream, call);
    drainAll();
    exec_.passthrough(call);
    return;
  }
  const std::uint32_t s = streamIndex(call.stream);
  AppEvent* e = s == kNone ? nullptr : appEvent(call.event, true);
  if (e == nullptr) {
    disable(Fallback::CapacityExceeded, call);
    exec_.passthrough(call);
    return;
  }
  mergeHostClock(s);
  StreamState& st = streams_[s];
  const std::uint64_t pending = st.origin_units;
  const bool join = pending > waitedUnits(s);
  if (join) {
    // The event must still cover the work that was redirected from this stream.
    const StreamHandle j = streams_[join_stream_].handle;
    exec_.recordEvent(join_slot_, call.stream);
    exec_.waitEvent(j, join_slot_);
    exec_.waitEvent(j, unitSlot(pending - 1));
    exec_.recordApplicationEvent(call, j);
    ++stats_.joins;
  } else {
    exec_.passthrough(call);
  }
  clock(s)[s] = ++st.seq;
  std::copy_n(clock(s), used_streams_, appEventClock(e));
  e->units = waitedUnits(s);
  if (join) {
    const std::size_t k = static_cast<std::size_t>((pending - 1) % limits_.units);
    std::uint32_t& c = appEventClock(e)[unit_stream_[k]];
    c = std::max(c, unit_seq_[k]);
    e->units = std::max(e->units, pending);
  }
}

std::uint32_t Scheduler::orderedStreamIndex(StreamHandle stream) {
  return stream == kLegacyStream && legacyMustWait() ? kNone : streamIndex(stream);
}

void Scheduler::onStreamWait(const Call& call) {
  const std::uint32_t s = orderedStreamIndex(call.stream);
  exec_.passthrough(call);
  if (s == kNone) return;  // the legacy stream waits for everything anyway: nothing to follow
  mergeHostClock(s);
  if (AppEvent* e = appEvent(call.event, false)) {
    const std::uint32_t* ec = appEventClock(e);
    std::uint32_t* c = clock(s);
    for (std::uint32_t j = 0; j < used_streams_; ++j) c[j] = std::max(c[j], ec[j]);
    streams_[s].waited_units = std::max(streams_[s].waited_units, e->units);
  }
}

void Scheduler::onHostSync(const Call& call) {
  flush();
  if (mode_ == Mode::Disabled) {
    exec_.passthrough(call);
    return;
  }
  const bool legacy = call.stream == kLegacyStream;
  switch (call.kind) {
    case CallKind::StreamSync: {
      const std::uint32_t s = orderedStreamIndex(call.stream);
      if (legacy && s == kNone) {  // synchronises every blocking stream: cover all redirected work
        exec_.passthrough(call);
        if (units_ > host_waited_units_) exec_.hostWait(unitSlot(units_ - 1));
        host_waited_units_ = units_;
        return;
      }
      if (s == kNone) {
        disable(Fallback::CapacityExceeded, call);
        exec_.passthrough(call);
        return;
      }
      exec_.passthrough(call);
      const std::uint64_t pending = streams_[s].origin_units;
      if (pending > waitedUnits(s)) exec_.hostWait(unitSlot(pending - 1));
      const std::uint32_t* c = clock(s);
      for (std::uint32_t j = 0; j < used_streams_; ++j) host_vc_[j] = std::max(host_vc_[j], c[j]);
      host_waited_units_ = std::max({host_waited_units_, waitedUnits(s), pending});
      ++host_epoch_;
      return;
    }
    case CallKind::EventSync: {
      exec_.passthrough(call);
      if (AppEvent* e = appEvent(call.event, false)) {
        const std::uint32_t* ec = appEventClock(e);
        for (std::uint32_t j = 0; j < used_streams_; ++j) host_vc_[j] = std::max(host_vc_[j], ec[j]);
        host_waited_units_ = std::max(host_waited_units_, e->units);
        ++host_epoch_;
      }
      return;
    }
    case CallKind::DeviceSync: {
      exec_.passthrough(call);  // covers the runtime's streams too
      for (std::uint32_t j = 0; j < used_streams_; ++j) host_vc_[j] = streams_[j].seq;
      host_waited_units_ = units_;
      ++host_epoch_;
      return;
    }
    case CallKind::StreamQuery: {
      const std::uint32_t s = orderedStreamIndex(call.stream);
      const std::uint64_t pending = s == kNone ? units_ : streams_[s].origin_units;
      if (pending > (s == kNone ? host_waited_units_ : waitedUnits(s))) {
        exec_.queryWith(call, unitSlot(pending - 1));
      } else {
        exec_.passthrough(call);
      }
      return;
    }
    case CallKind::EventQuery: {
      // An event the runtime recorded late (behind work it held) must not read as done before
      // that work is: the answer also covers the units the event stands for.
      const AppEvent* e = appEvent(call.event, false);
      if (e != nullptr && e->units > host_waited_units_) {
        exec_.queryWith(call, unitSlot(e->units - 1));
      } else {
        exec_.passthrough(call);
      }
      return;
    }
    default: exec_.passthrough(call); return;
  }
}

void Scheduler::onBarrier(const Call& call, Fallback why) {
  flush();
  if (mode_ == Mode::Disabled) {
    exec_.passthrough(call);
    return;
  }
  fallback(why, call);
  // kLegacyStream also names no stream at all (a device-wide call); GPU work on the legacy
  // stream itself waits there.
  const bool on_legacy_stream = call.kind == CallKind::Kernel || call.kind == CallKind::Memcpy ||
                                call.kind == CallKind::Memset || call.kind == CallKind::Collective;
  const std::uint32_t s = call.stream == kLegacyStream && !on_legacy_stream ? kNone : streamIndex(call.stream);
  if (s != kNone) {
    // Unknown effect on one stream: it waits for everything in flight, and any buffer may
    // have been touched there.
    mergeHostClock(s);
    waitForUnits(s, units_);
    exec_.passthrough(call);
    StreamState& st = streams_[s];
    clock(s)[s] = ++st.seq;
    st.barrier_seq = st.seq;
  } else {
    // Unknown effect anywhere on the device (or the legacy stream): the host waits for all
    // redirected work first, so whatever the call enqueues comes after it.
    if (units_ > host_waited_units_) exec_.hostWait(unitSlot(units_ - 1));
    host_waited_units_ = units_;
    exec_.passthrough(call);
  }
  last_barrier_pc_ = pc_;
}

// --- flushing ----------------------------------------------------------------------------------

void Scheduler::flush() {
  if (held_.empty() || mode_ == Mode::Disabled) return;
  ++flushes_;
  GroupSignature signature;
  for (const HeldCollective& h : held_) signature.add(h.args);
  const GroupPlan* plan = rules_.find(signature.value());
  if (plan != nullptr && (plan->members != held_.size() || (!plan->keep && !executable(*plan)))) plan = nullptr;
  // Ranks agree before a group whose plan changes the order or the set of NCCL calls (every
  // rank must then make the same change), before a group the plan does not know (another rank
  // may hold a group there that the plan reorders, and waits for this one's word), and at the
  // first flush (every rank holds the same plan). The digest covers every group flushed on the
  // group's communicators since the start, so that ranks whose groups differed at a flush that
  // needed no agreement (their call sequences grouped differently) disagree at the next one,
  // before anything is reordered. A planned group issued as the program called it changes
  // nothing another rank could see.
  const std::uint64_t history = chainHistory(signature.value() + held_.size());
  const bool across_ranks = flushes_ == 1 || plan == nullptr || (!plan->keep && reorders(*plan));
  const std::uint64_t digest = trace::mix64(rules_.plan_checksum ^ history);
  if (!exec_.agree(digest, held_, across_ranks)) {
    disable(Fallback::RanksDisagree, callOf(held_.front()));
    return;
  }
  if (plan != nullptr && plan->keep) {
    issueInOrder();
    ++stats_.kept_groups;
  } else if (plan != nullptr) {
    issuePlanned(*plan);
    ++stats_.planned_groups;
  } else {
    fallback(Fallback::UnplannedGroup, callOf(held_.front()));
    issueInOrder();
    ++stats_.unplanned_groups;
  }
  if (blocking_held_) blocking_units_ = units_;
  blocking_held_ = false;
  held_.clear();
  held_meta_.clear();
}

bool Scheduler::settled(std::uint64_t units) const {
  if (units == 0) return true;
  for (std::uint32_t s = 0; s < used_streams_; ++s) {
    if (s == comm_stream_ || s == join_stream_) continue;  // units run there, in order
    if (waitedUnits(s) < units) return false;
  }
  return true;
}

bool Scheduler::reorders(const GroupPlan& plan) {
  for (std::uint32_t b = 0; b < plan.bucketCount(); ++b) {
    if (plan.bucketEnd(b) - plan.bucket_first[b] != 1 || plan.parts[b] != 1) return true;  // fused or split
  }
  for (std::size_t i = 0; i < plan.order.size(); ++i) {
    if (plan.order[i].bucket != i) return true;
  }
  return false;
}

std::uint64_t Scheduler::chainHistory(std::uint64_t group) {
  // One chain per communicator of the group: its peers share that communicator's groups only.
  std::uint64_t digest = 0;
  for (const HeldCollective& h : held_) {
    CommHistory* entry = nullptr;
    for (CommHistory& c : histories_) {
      if (c.comm == h.args.comm || c.comm == 0) {
        entry = &c;
        break;
      }
    }
    if (entry == nullptr) return trace::mix64(group ^ flushes_);  // more communicators than kept: this flush only
    if (entry->comm == 0) entry->comm = h.args.comm;
    if (entry->flush == flushes_) continue;  // chained already, for an earlier member
    entry->flush = flushes_;
    entry->chain = trace::mix64(entry->chain ^ trace::mix64(group));
    digest ^= trace::mix64(entry->chain + h.args.comm_index);  // the handle differs across ranks
  }
  return digest;
}

bool Scheduler::executable(const GroupPlan& plan) const {
  for (std::uint32_t b = 0; b < plan.bucketCount(); ++b) {
    const std::uint32_t first = plan.bucket_first[b];
    const trace::CollType type = held_[first].args.type;
    if ((!fusible(type) && plan.bucketEnd(b) - first != 1) || (!splittable(type) && plan.parts[b] != 1)) return false;
    for (std::uint32_t i = first + 1; i < plan.bucketEnd(b); ++i) {
      if (!sameReduction(held_[i].args, held_[i - 1].args)) return false;
    }
  }
  return true;
}

bool Scheduler::contiguous(std::uint32_t first, std::uint32_t end) const {
  // Fused reduce-scatters and all-gathers always go through the fusion buffer: separate calls'
  // per-rank slices never lie rank by rank (UnitIssue).
  if (end - first > 1 && !splittable(held_[first].args.type)) return false;
  for (std::uint32_t i = first + 1; i < end; ++i)
    if (!followsInMemory(held_[i - 1].args, held_[i].args)) return false;
  return true;
}

void Scheduler::issuePlanned(const GroupPlan& plan) {
  // Every unit goes to the communication stream, so units complete in the order they are
  // issued (which the consumers' waits rely on). Without the communication stream in the plan,
  // a unit waits for its members' positions, as in the original order, rather than only for
  // their producers: it only gains the fusion.
  const std::uint32_t u = comm_stream_;
  const StreamHandle uh = streams_[u].handle;

  for (const UnitRef& ref : plan.order) {
    const std::uint32_t first = plan.bucket_first[ref.bucket];
    const std::uint32_t end = plan.bucketEnd(ref.bucket);
    std::uint64_t total = 0;
    for (std::uint32_t i = first; i < end; ++i) total += held_[i].args.count;
    const std::uint64_t parts = plan.parts[ref.bucket];
    const std::uint64_t lo = total * ref.part / parts;
    const std::uint64_t hi = total * (ref.part + 1) / parts;
    if (hi == lo) continue;
    // Members whose elements fall in [lo, hi) of the bucket's concatenation.
    std::uint64_t at = 0;
    for (std::uint32_t i = first; i < end; at += held_[i].args.count, ++i) {
      if (at + held_[i].args.count <= lo || at >= hi) continue;
      const HeldMeta& m = held_meta_[i];
      for (const std::uint32_t t : {m.send_tensor, m.recv_tensor}) {
        const bool proven = rules_.communication_stream && producerProven(tensors_[t], m.stream);
        if (!proven && !m.has_position) {
          // Proven when held, but its producer event was reused since (a very long hold):
          // the stream's position now is later than the call's, hence still after the producer.
          exec_.recordEvent(m.position, streams_[m.stream].handle);
          held_meta_[i].has_position = true;
        }
        const EventSlot slot = proven ? tensors_[t].touch_slot : m.position;
        if (slot_waited_[slot] == flushes_) continue;
        slot_waited_[slot] = flushes_;
        exec_.waitEvent(uh, slot);
        ++(proven ? stats_.producer_waits : stats_.position_waits);
      }
    }
    UnitIssue issue;
    issue.members = std::span<const HeldCollective>(held_.data() + first, end - first);
    issue.offset = lo;
    issue.count = hi - lo;
    issue.contiguous = contiguous(first, end);
    issue.stream = uh;
    issue.sequence = units_;
    exec_.issueUnit(issue);
    exec_.recordEvent(unitSlot(units_), uh);
    StreamState& us = streams_[u];
    clock(u)[u] = ++us.seq;
    const std::size_t k = static_cast<std::size_t>(units_ % limits_.units);
    unit_seq_[k] = us.seq;
    unit_stream_[k] = u;
    at = 0;
    for (std::uint32_t i = first; i < end; at += held_[i].args.count, ++i) {
      if (at + held_[i].args.count <= lo || at >= hi) continue;
      held_meta_[i].last_unit = units_;
    }
    ++units_;
    ++stats_.units;
  }

  for (std::size_t i = 0; i < held_.size(); ++i) {
    const HeldMeta& m = held_meta_[i];
    const std::uint64_t wait = rules_.per_bucket_waits ? m.last_unit + 1 : units_;
    for (const std::uint32_t t : {m.send_tensor, m.recv_tensor}) {
      Tensor& x = tensors_[t];
      x.held = false;
      x.wait_units = wait;
      touchSeq(t, u) = unit_seq_[static_cast<std::size_t>(m.last_unit % limits_.units)];
      x.last_touch_stream = u;
      x.last_touch_pc = pc_;
      x.dominated = false;
      x.touch_slot = kNone;
    }
    StreamState& origin = streams_[m.stream];
    origin.origin_units = std::max(origin.origin_units, m.last_unit + 1);
  }
}

void Scheduler::issueInOrder() {
  for (std::size_t i = 0; i < held_.size(); ++i) {
    const HeldMeta& m = held_meta_[i];
    const std::uint32_t s = m.stream;
    mergeHostClock(s);
    for (const std::uint32_t t : {m.send_tensor, m.recv_tensor}) {
      tensors_[t].held = false;
      waitForUnits(s, tensors_[t].wait_units);
    }
    exec_.issueHeld(held_[i]);
    clock(s)[s] = ++streams_[s].seq;
    const auto [slot, gen] = nextTouchEvent();
    exec_.recordEvent(slot, held_[i].stream);
    recordTouch(m.send_tensor, s, slot, gen);
    if (m.recv_tensor != m.send_tensor) recordTouch(m.recv_tensor, s, slot, gen);
  }
}

}  // namespace syncopate::tuner

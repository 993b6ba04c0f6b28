#include "syncopate/analyzer/critical_path.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "issue_order.hpp"
#include "syncopate/analyzer/parallel_for.hpp"
#include "syncopate/analyzer/sync_calls.hpp"

namespace syncopate::analyzer {

std::string_view toString(PathCategory c) {
  switch (c) {
    case PathCategory::Compute: return "compute";
    case PathCategory::Memory: return "memory";
    case PathCategory::Communication: return "communication";
    case PathCategory::StragglerWait: return "straggler_wait";
    case PathCategory::Launch: return "launch";
    case PathCategory::Host: return "host";
    case PathCategory::Sync: return "sync";
    case PathCategory::Idle: return "idle";
  }
  return "?";
}

// What the walk needs beyond the model's columns, built once per model.
class PathIndex {
 public:
  explicit PathIndex(const RunModel& m) : m_(m) {
    buildIssueOrder();
    for (Index h = 0; h < m.host_syncs.size(); ++h)
      if (m.host_syncs.api_call[h] != kNone) sync_of_call_.emplace(m.host_syncs.api_call[h], h);
    for (std::size_t i = 0; i < m.event_markers.size(); ++i) {
      const Index op = m.event_markers.op[i];
      if (m.ops.kind[op] != trace::OpKind::EventRecord) continue;
      records_[{m.rankOfOp(op), m.event_markers.event_id[i]}].push_back({issueTime(m, op), op});
    }
    for (auto& [key, list] : records_) std::sort(list.begin(), list.end());
    // Launching calls of each rank by end time, for hand-offs between host threads.
    std::vector<bool> launched(m.api_calls.size(), false);
    for (Index op = 0; op < m.ops.size(); ++op)
      if (m.ops.launch[op] != kNone) launched[m.ops.launch[op]] = true;
    launches_by_end_.resize(m.ranks.size());
    for (Index c = 0; c < m.api_calls.size(); ++c)
      if (launched[c]) launches_by_end_[m.rankOfCall(c)].push_back(c);
    for (auto& list : launches_by_end_)
      std::sort(list.begin(), list.end(), [&](Index a, Index b) { return m.api_calls.end[a] < m.api_calls.end[b]; });
    // Calls that block until the device, a stream or an event is done (importers of traces
    // without synchronization records give no host-sync rows for them, so the path infers what
    // they waited for: the last op that ended while they blocked), and calls that only ask
    // whether it is done (cudaEventQuery), which return at once: CUPTI gives them
    // synchronization records too, but the host never waited in them.
    for (StringId id = 0; id < m.strings.size(); ++id) {
      const auto call = syncCallNamed(m.str(id));
      if (call && call->what == SyncCallClass::Blocks) blocking_names_.push_back(id);
      if (call && call->what == SyncCallClass::Polls) polling_names_.push_back(id);
    }
  }

  // The last call of another thread of `rank` that launched GPU work and ended in (after, by].
  Index lastLaunchElsewhere(Index rank, Index thread, std::int64_t after, std::int64_t by) const {
    const auto& list = launches_by_end_[rank];
    auto it = std::upper_bound(list.begin(), list.end(), by,
                               [&](std::int64_t t, Index c) { return t < m_.api_calls.end[c]; });
    while (it != list.begin()) {
      --it;
      if (m_.api_calls.end[*it] <= after) return kNone;
      if (m_.api_calls.thread[*it] != thread) return *it;
    }
    return kNone;
  }

  // What a blocking call without a host-sync row waited for: a copy or memset it issued itself
  // that finished before it returned (a synchronous copy), or, for the synchronize calls, the
  // last op of its rank issued before the call that finished while it blocked. kNone when it
  // did not wait for the GPU.
  // Kernel launches never wait for their kernel, and the markers a call issues (a stream's wait
  // for an event, an event record) carry the call's own timestamps in imported traces: ending
  // inside the call, neither says the host waited.
  Index waitedByCall(Index call) const {
    const std::int64_t start = m_.api_calls.start[call], end = m_.api_calls.end[call];
    Index best = kNone;
    for (const Index op : m_.opsLaunchedBy(call)) {
      if (m_.ops.op_class[op] != OpClass::Memory) continue;
      if (m_.ops.end[op] > start && m_.ops.end[op] <= end && (best == kNone || m_.ops.end[op] > m_.ops.end[best])) best = op;
    }
    if (best != kNone) return best;
    if (std::find(blocking_names_.begin(), blocking_names_.end(), m_.api_calls.name[call]) == blocking_names_.end())
      return kNone;
    const RankInfo& r = m_.ranks[m_.rankOfCall(call)];
    for (Index st = r.first_stream; st < r.first_stream + r.stream_count; ++st) {
      const Index op = lastOpBefore(st, end + 1, end, start);
      if (op != kNone && m_.ops.end[op] > start && (best == kNone || m_.ops.end[op] > m_.ops.end[best])) best = op;
    }
    return best;
  }

  // The op issued to the same stream just before `op` (a stream runs its ops in the order they
  // were issued), or kNone. This is the start order except for markers whose timestamps are
  // those of their host call rather than of the GPU.
  Index streamPredecessor(Index op) const { return issue_pred_[op]; }

  Index syncOfCall(Index call) const {
    auto it = sync_of_call_.find(call);
    return it == sync_of_call_.end() ? kNone : it->second;
  }

  bool polls(Index call) const {
    return std::find(polling_names_.begin(), polling_names_.end(), m_.api_calls.name[call]) != polling_names_.end();
  }

  // The GPU op a host sync waited for, or kNone: of the ops issued before the sync's call (a
  // sync waits for the work issued before it, not for what other threads issue while it
  // blocks), an event's last record before the sync, or the last op issued to that record's
  // stream before it; where the recording lacks that record (it came before the recording, or
  // the source has none), or for a stream sync, the last op of the stream that ended by the
  // sync's end; for a device or context sync, or one whose target is unknown, the last such op
  // of any stream of the rank.
  Index waitedOp(Index h) const {
    const auto& s = m_.host_syncs;
    const Index rank = s.rank[h];
    const std::int64_t issued = s.api_call[h] != kNone ? m_.api_calls.start[s.api_call[h]] : s.start[h];
    if (s.sync_kind[h] == trace::SyncKind::Event && s.event_id[h] != kUnknown) {
      auto it = records_.find({rank, s.event_id[h]});
      if (it != records_.end()) {
        auto rec = std::upper_bound(it->second.begin(), it->second.end(), std::make_pair(issued, kNone));
        if (rec != it->second.begin()) {
          const auto [record_issued, record] = *std::prev(rec);
          return lastOpBefore(m_.ops.stream[record], m_.ops.start[record] + 1, s.end[h], record_issued + 1);
        }
      }
    }
    if (s.stream[h] != kNone) return lastOpBefore(s.stream[h], s.end[h] + 1, s.end[h], issued);
    Index best = kNone;
    const RankInfo& r = m_.ranks[rank];
    for (Index st = r.first_stream; st < r.first_stream + r.stream_count; ++st) {
      const Index op = lastOpBefore(st, s.end[h] + 1, s.end[h], issued);
      if (op != kNone && (best == kNone || m_.ops.end[op] > m_.ops.end[best])) best = op;
    }
    return best;
  }

 private:
  // The op of `stream` that started last before `limit` and ended by `latest_end`, of those
  // whose launching call began before `issued_before` (ops without a recorded launch are taken
  // to have been issued in time: when they were issued is not known).
  Index lastOpBefore(Index stream, std::int64_t limit, std::int64_t latest_end,
                     std::int64_t issued_before = INT64_MAX) const {
    const StreamInfo& st = m_.streams[stream];
    const auto* begin = m_.ops.start.data() + st.first_op;
    const auto* end = begin + st.op_count;
    const auto* it = std::lower_bound(begin, end, limit);
    for (const auto* p = it; p != begin;) {
      --p;
      const auto op = static_cast<Index>(p - m_.ops.start.data());
      if (m_.ops.op_class[op] == OpClass::Marker && m_.ops.kind[op] != trace::OpKind::EventRecord) continue;
      if (m_.ops.launch[op] != kNone && m_.api_calls.start[m_.ops.launch[op]] >= issued_before) continue;
      if (m_.ops.end[op] <= latest_end) return op;
    }
    return kNone;
  }

  void buildIssueOrder() {
    issue_pred_.assign(m_.ops.size(), kNone);
    std::vector<std::pair<std::int64_t, Index>> order;
    for (const StreamInfo& st : m_.streams) {
      const Index first = st.first_op, last = st.first_op + st.op_count;
      bool in_order = true;
      for (Index op = first + 1; op < last && in_order; ++op) in_order = issueTime(m_, op - 1) <= issueTime(m_, op);
      if (in_order) {
        for (Index op = first + 1; op < last; ++op) issue_pred_[op] = op - 1;
        continue;
      }
      order.clear();
      for (Index op = first; op < last; ++op) order.push_back({issueTime(m_, op), op});
      std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::size_t i = 1; i < order.size(); ++i) issue_pred_[order[i].second] = order[i - 1].second;
    }
  }

  const RunModel& m_;
  std::vector<Index> issue_pred_;
  std::unordered_map<Index, Index> sync_of_call_;
  std::map<std::pair<Index, std::int64_t>, std::vector<std::pair<std::int64_t, Index>>> records_;
  std::vector<StringId> blocking_names_, polling_names_;
  std::vector<std::vector<Index>> launches_by_end_;  // per rank
};

namespace {

PathCategory categoryOf(OpClass c) {
  switch (c) {
    case OpClass::Compute: return PathCategory::Compute;
    case OpClass::Memory: return PathCategory::Memory;
    case OpClass::Communication: return PathCategory::Communication;
    case OpClass::Marker: return PathCategory::Idle;
  }
  return PathCategory::Idle;
}

class Walker {
 public:
  Walker(const RunModel& m, const PathIndex& index, const ArrivalOf& arrival, const PathLegStart& start)
      : m_(m), index_(index), arrival_(arrival), floor_(start.floor), straggler_(start.straggler),
        straggler_floor_(start.straggler_floor) {}

  PathLeg walk(const PathLegStart& start) {
    State s{NodeRef::op(start.op), start.time, false};
    bool going = start.before ? continueBeforeOp(s, start.op, start.time) : true;
    const std::size_t limit = 4 * (m_.ops.size() + m_.api_calls.size()) + 16;
    for (std::size_t step = 0; going && step < limit && s.time > floor_; ++step) going = advance(s);
    PathLeg leg;
    if (handed_off_) {
      leg.handed_off = true;
      leg.next = next_;
      leg.next_time = next_time_;
    } else if (s.time > floor_) {
      emit(s.node, floor_, s.time, PathCategory::Idle, true);
    }
    leg.straggler = straggler_;
    leg.straggler_floor = straggler_floor_;
    std::reverse(out_.begin(), out_.end());
    leg.segments = merged();
    return leg;
  }

 private:
  struct State {
    NodeRef node;
    std::int64_t time;       // the walk has covered everything after `time`
    bool at_start;           // the node is entered at its start (launch edge): none of it is covered
  };

  Index rankOf(NodeRef n) const {
    switch (n.kind()) {
      case NodeRef::Kind::Op: return m_.rankOfOp(n.index());
      case NodeRef::Kind::ApiCall: return m_.rankOfCall(n.index());
      case NodeRef::Kind::HostSync: return m_.host_syncs.rank[n.index()];
    }
    return 0;
  }

  // Records [a, b] (clipped to the floor) backwards; the part inside an open straggler window is
  // the straggler's lateness.
  void emit(NodeRef node, std::int64_t a, std::int64_t b, PathCategory cat, bool waiting = false) {
    a = std::max(a, floor_);
    if (b <= a) return;
    if (straggler_ != kNone && b > straggler_floor_) {
      const std::int64_t split = std::max(a, straggler_floor_);
      out_.push_back({node, rankOf(node), split, b, PathCategory::StragglerWait, straggler_, waiting});
      b = split;
      if (b <= straggler_floor_) straggler_ = kNone;
      if (b <= a) return;
    }
    out_.push_back({node, rankOf(node), a, b, cat, kNone, waiting});
  }

  bool advance(State& s) {
    switch (s.node.kind()) {
      case NodeRef::Kind::Op: return advanceOp(s);
      case NodeRef::Kind::ApiCall: return advanceCall(s);
      case NodeRef::Kind::HostSync: return false;  // not reached: syncs are entered through their calls
    }
    return false;
  }

  bool advanceOp(State& s) {
    const Index op = s.node.index();
    const std::int64_t start = m_.ops.start[op];
    if (CollectiveArrival a; arrival_(op, a)) {
      // A collective ends after its last participant arrived.
      emit(s.node, std::max(a.last, start), s.time, PathCategory::Communication);
      const std::int64_t at = std::min(a.last, s.time);
      if (a.second < a.last) openStragglerWindow(a.second, a.last, a.last_rank);
      if (a.last_op == kNone) {  // on a rank another process holds: the next leg is its
        handed_off_ = true;
        next_ = a;
        next_time_ = at;
        return false;
      }
      return continueBeforeOp(s, a.last_op, at);
    }
    emit(s.node, start, s.time, categoryOf(m_.ops.op_class[op]));
    return continueBeforeOp(s, op, std::min(start, s.time));
  }

  void openStragglerWindow(std::int64_t from, std::int64_t to, Index rank) {
    if (to <= floor_) return;
    straggler_floor_ = straggler_ == kNone ? from : std::min(straggler_floor_, from);
    straggler_ = rank;
  }

  // Moves the walk to whatever `op` (which started at `t`) waited for last.
  bool continueBeforeOp(State& s, Index op, std::int64_t t) {
    NodeRef best;
    std::int64_t ready = INT64_MIN;
    PathCategory gap = PathCategory::Idle;
    bool best_at_start = false;
    auto consider = [&](NodeRef n, std::int64_t r, PathCategory g, bool at_start) {
      r = std::min(r, t);
      if (r > ready) ready = r, best = n, gap = g, best_at_start = at_start;
    };
    // A stream wait is done when the event it waits for is recorded, whatever time the marker
    // itself carries, so the record is a predecessor of the wait and of the op after it.
    auto considerRecordsOf = [&](Index wait) {
      if (m_.ops.kind[wait] != trace::OpKind::StreamWait) return;
      for (Index e : m_.flows.incoming(NodeRef::op(wait)))
        if (m_.flows.kind(e) == FlowKind::EventWait)
          consider(m_.flows.src(e), m_.ops.end[m_.flows.src(e).index()], PathCategory::Idle, false);
    };
    // GPU-side predecessors first: on a tie the op waited for the GPU, not for the host.
    if (const Index pred = index_.streamPredecessor(op); pred != kNone) {
      consider(NodeRef::op(pred), m_.ops.end[pred], PathCategory::Idle, false);
      considerRecordsOf(pred);
    }
    considerRecordsOf(op);
    if (const Index call = m_.ops.launch[op]; call != kNone)
      consider(NodeRef::apiCall(call), m_.api_calls.start[call], PathCategory::Launch, true);
    if (ready == INT64_MIN) {
      emit(NodeRef::op(op), floor_, t, PathCategory::Idle, true);
      s.time = floor_;
      return false;
    }
    emit(NodeRef::op(op), ready, t, gap, true);
    s = {best, ready, best_at_start};
    return true;
  }

  bool advanceCall(State& s) {
    const Index call = s.node.index();
    const std::int64_t start = m_.api_calls.start[call];
    if (!s.at_start) {
      // A blocking call that returned when the GPU op it waited for finished.
      const Index h = index_.syncOfCall(call);
      const Index waited = index_.polls(call) ? kNone : h != kNone ? index_.waitedOp(h) : index_.waitedByCall(call);
      if (waited != kNone && m_.ops.end[waited] > start && m_.ops.end[waited] <= s.time) {
        emit(s.node, m_.ops.end[waited], s.time, PathCategory::Sync);
        s = {NodeRef::op(waited), m_.ops.end[waited], false};
        return true;
      }
      emit(s.node, start, s.time, PathCategory::Host);
    }
    const std::int64_t t = std::min(start, s.time);
    const Index thread = m_.api_calls.thread[call];
    const bool has_previous = call > 0 && m_.api_calls.thread[call - 1] == thread;
    const std::int64_t previous_end = has_previous ? std::min(m_.api_calls.end[call - 1], t) : INT64_MIN;
    // A thread that made no call while another thread of its process launched GPU work is
    // taken to have waited for that thread (PyTorch's main thread waits for its autograd
    // thread during backward): the path continues on the thread that was active last.
    const Index elsewhere = index_.lastLaunchElsewhere(m_.rankOfCall(call), thread, previous_end, t);
    if (elsewhere != kNone) {
      const std::int64_t ready = m_.api_calls.end[elsewhere];
      emit(s.node, ready, t, PathCategory::Host, true);
      s = {NodeRef::apiCall(elsewhere), ready, false};
      return true;
    }
    if (has_previous) {
      emit(s.node, previous_end, t, PathCategory::Host, true);  // CPU work between the two calls
      s = {NodeRef::apiCall(call - 1), previous_end, false};
      return true;
    }
    emit(s.node, floor_, t, PathCategory::Host, true);  // before the thread's first recorded call
    s.time = floor_;
    return false;
  }

  // Adjacent segments on the same node and category become one.
  std::vector<PathSegment> merged() const {
    std::vector<PathSegment> r;
    for (const PathSegment& seg : out_) {
      if (!r.empty() && r.back().node == seg.node && r.back().category == seg.category &&
          r.back().straggler == seg.straggler && r.back().waiting == seg.waiting && r.back().end == seg.start) {
        r.back().end = seg.end;
      } else if (seg.end > seg.start) {
        r.push_back(seg);
      }
    }
    return r;
  }

  const RunModel& m_;
  const PathIndex& index_;
  const ArrivalOf& arrival_;
  std::int64_t floor_;
  std::vector<PathSegment> out_;
  Index straggler_;
  std::int64_t straggler_floor_;
  bool handed_off_ = false;
  CollectiveArrival next_;
  std::int64_t next_time_ = 0;
};

// Where rank `r`'s iteration `it` begins for its path: where its GPU window begins, except that
// an iteration with nothing earlier on the rank's GPU begins where the host work that
// issued its first op began: the outermost range open around that op's launch that started
// within the step (a framework's compiled region, an operator). Later iterations' windows
// tile the GPU's time, so the host's lead-in to them lies in the window before; the first has
// none before it, and without this a step whose GPU work is one short kernel would have a
// path of that kernel alone, however long the host worked to launch it.
std::int64_t pathStart(const RunModel& m, Index r, const RankIteration& it) {
  Index first = kNone;
  const RankInfo& info = m.ranks[r];
  for (Index st = info.first_stream; st < info.first_stream + info.stream_count; ++st) {
    const StreamInfo& stream = m.streams[st];
    for (Index op = stream.first_op; op < stream.first_op + stream.op_count; ++op) {
      if (m.ops.op_class[op] == OpClass::Marker) continue;
      if (m.ops.start[op] < it.start) return it.start;  // earlier GPU work: the host's lead-in overlapped it
      if (m.ops.start[op] == it.start && first == kNone) first = op;
      break;  // a stream's ops are in start order: its first busy op is its earliest
    }
  }
  const Index call = first == kNone ? kNone : m.ops.launch[first];
  if (call == kNone) return it.start;
  std::int64_t start = it.start;
  for (Index open = m.rangeOpenAt(m.api_calls.thread[call], m.api_calls.start[call]);
       open != kNone && m.ranges.start[open] > it.host_start; open = m.ranges.parent[open])
    start = std::min(start, m.ranges.start[open]);
  return start;
}

}  // namespace

void CriticalPath::attribute() {
  attribution = {};
  for (const PathSegment& s : segments) attribution[static_cast<std::size_t>(s.category)] += s.end - s.start;
}

RankPathEnds rankPathEnds(const RunModel& m, Index r, const RankIteration& it) {
  RankPathEnds ends{pathStart(m, r, it), kNone};
  // The op of this iteration that ended last: ops that start inside the window.
  const RankInfo& info = m.ranks[r];
  for (Index st = info.first_stream; st < info.first_stream + info.stream_count; ++st) {
    const StreamInfo& stream = m.streams[st];
    const auto* begin = m.ops.start.data() + stream.first_op;
    const auto* end = begin + stream.op_count;
    for (const auto* p = std::lower_bound(begin, end, it.start); p != end && *p < it.end; ++p) {
      const auto op = static_cast<Index>(p - m.ops.start.data());
      if (m.ops.op_class[op] == OpClass::Marker) continue;
      if (ends.sink == kNone || m.ops.end[op] > m.ops.end[ends.sink]) ends.sink = op;
    }
  }
  return ends;
}

MatchArrivals matchArrivals(const RunModel& m, Index match) {
  MatchArrivals a;
  for (Index p : m.matches.of(match)) {
    const Index op = m.collectives.op[p];
    const std::int64_t arrival = m.ops.start[op];
    if (arrival > a.last) a.second = a.last, a.last = arrival, a.first_last = op;
    else a.second = std::max(a.second, arrival);
  }
  return a;
}

bool matchedArrival(const RunModel& m, Index op, CollectiveArrival& out) {
  const Index row = m.collectiveOf(op);
  const Index match = row == kNone ? kNone : m.collectives.match[row];
  if (match == kNone || m.matches.count[match] <= 1) return false;
  const MatchArrivals a = matchArrivals(m, match);
  const Index last_op = m.ops.start[op] == a.last ? op : a.first_last;
  out = {a.last, a.second, m.rankOfOp(last_op), m.ops.store_id[last_op], last_op};
  return true;
}

PathNodeFacts pathNodeFacts(const RunModel& m, const PathSegment& s) {
  PathNodeFacts f;
  const Index i = s.node.index();
  switch (s.node.kind()) {
    case NodeRef::Kind::Op:
      f.store_id = m.ops.store_id[i];
      f.name = (s.waiting ? "waiting before " : "") + std::string(m.str(m.ops.name[i]));
      break;
    case NodeRef::Kind::ApiCall: {
      f.store_id = m.api_calls.store_id[i];
      f.thread = m.api_calls.thread[i];
      // CPU work between calls is named by the innermost NVTX (or PyTorch) range open on the
      // thread halfway through it, which says more than the call after it.
      if (s.waiting && s.category == PathCategory::Host) {
        const Index open = m.rangeOpenAt(f.thread, s.start + (s.end - s.start) / 2);
        f.name = open == kNone ? std::string("(CPU work between API calls)") : "CPU: " + std::string(m.str(m.ranges.name[open]));
      } else {
        f.name = m.str(m.api_calls.name[i]);
      }
      break;
    }
    case NodeRef::Kind::HostSync:
      f.store_id = m.host_syncs.store_id[i];
      f.name = "host sync";
      break;
  }
  return f;
}

PathWalker::PathWalker(const RunModel& model) : model_(model), index_(std::make_unique<PathIndex>(model)) {}
PathWalker::~PathWalker() = default;

PathLeg PathWalker::walk(const PathLegStart& start, const ArrivalOf& arrival) const {
  return Walker(model_, *index_, arrival, start).walk(start);
}

namespace {

// A walk on one model that holds every rank: a single leg.
CriticalPath walkWhole(const RunModel& m, const PathWalker& walker, std::int64_t iteration, Index sink,
                       std::int64_t window_start) {
  const ArrivalOf arrival = [&m](Index op, CollectiveArrival& out) { return matchedArrival(m, op, out); };
  CriticalPath p;
  p.iteration = iteration;
  p.start = window_start;
  p.end = m.ops.end[sink];
  PathLegStart start;
  start.op = sink;
  start.time = p.end;
  start.floor = window_start;
  p.segments = walker.walk(start, arrival).segments;
  p.attribute();
  return p;
}

}  // namespace

CriticalPath criticalPathTo(const RunModel& m, Index sink, std::int64_t window_start) {
  return walkWhole(m, PathWalker(m), 0, sink, window_start);
}

std::vector<CriticalPath> criticalPaths(const RunModel& m, const Iterations& its) {
  const PathWalker walker(m);
  std::vector<CriticalPath> out(its.numbers.size());
  // One byte per iteration, not std::vector<bool>: its bits share words, and two threads setting
  // neighbouring bits at once would lose one of the writes.
  std::vector<unsigned char> found(its.numbers.size(), 0);
  // Iterations are independent walks over a shared, read-only index.
  parallelFor(its.numbers.size(), [&](std::size_t k) {
    const std::int64_t number = its.numbers[k];
    std::int64_t window_start = INT64_MAX;
    Index sink = kNone;
    for (Index r = 0; r < its.per_rank.size(); ++r) {
      for (const RankIteration& it : its.per_rank[r]) {
        if (it.number != number || it.op_count == 0) continue;
        const RankPathEnds ends = rankPathEnds(m, r, it);
        window_start = std::min(window_start, ends.start);
        if (ends.sink != kNone && (sink == kNone || m.ops.end[ends.sink] > m.ops.end[sink])) sink = ends.sink;
      }
    }
    if (sink == kNone) return;
    out[k] = walkWhole(m, walker, number, sink, window_start);
    found[k] = 1;
  });
  std::vector<CriticalPath> paths;
  for (std::size_t k = 0; k < out.size(); ++k)
    if (found[k] != 0) paths.push_back(std::move(out[k]));
  return paths;
}

}  // namespace syncopate::analyzer

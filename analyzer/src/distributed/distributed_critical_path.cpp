#include "distributed_critical_path.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "part_codec.hpp"
#include "store_plan.hpp"
#include "syncopate/analyzer/parallel_for.hpp"

namespace syncopate::analyzer {

namespace {

// Where the participants of one of a process's collective ops arrived, as the root's model says.
struct ArrivalFact {
  std::int64_t store_id = kUnknown;
  std::int64_t last = 0, second = 0;
  std::int64_t last_store_id = kUnknown;
  Index row = kNone;  // the op's rank row
  Index last_rank = kNone;
};

// Where an iteration's path may begin and end on one rank (rankPathEnds), in the run's rank rows.
struct PathEndCandidate {
  std::int64_t number = 0;
  Index row = kNone;
  std::int64_t start = 0;
  std::int64_t sink_end = 0;
  Index sink = kNone;  // in the sending process's model; kNone: only markers
};

// The next leg of path `path`, on rank `row`: from the sink `start.op` of its owner's model, or
// (`start.before`) before the collective op `store_id`, which its owner finds.
struct LegRequest {
  std::uint64_t path = 0;
  Index row = kNone;
  std::int64_t store_id = kUnknown;
  PathLegStart start;
};

struct LegResult {
  std::uint64_t path = 0;
  std::string failure;
  std::vector<PathSegment> segments;  // rank rows of the run
  std::vector<std::int64_t> store_ids;
  std::vector<Index> threads;
  std::vector<std::string> names;
  bool handed_off = false;
  Index next_rank = kNone;
  std::int64_t next_store_id = kUnknown, next_time = 0;
  Index straggler = kNone;
  std::int64_t straggler_floor = 0;

  void write(PartWriter& w) const {
    w.put(path).put(failure).put(segments).put(store_ids).put(threads).put(names).put(handed_off).put(next_rank)
        .put(next_store_id).put(next_time).put(straggler).put(straggler_floor);
  }
  bool read(PartReader& r) {
    r.get(path).get(failure).get(segments).get(store_ids).get(threads).get(names).get(handed_off).get(next_rank)
        .get(next_store_id).get(next_time).get(straggler).get(straggler_floor);
    return r.ok() && store_ids.size() == segments.size() && threads.size() == segments.size() &&
           names.size() == segments.size();
  }
};

// A process's collective ops by (rank row, id in the rank's store): how the root names them.
class CollectiveOps {
 public:
  explicit CollectiveOps(const OwnRanks& own) {
    const RunModel& m = own.model;
    for (Index c = 0; c < m.collectives.size(); ++c) {
      const Index op = m.collectives.op[c];
      ops_.push_back({own.row_of[m.rankOfOp(op)], m.ops.store_id[op], op});
    }
    std::sort(ops_.begin(), ops_.end());
    // Two ops with one id: neither can be named.
    for (std::size_t i = 1; i < ops_.size(); ++i)
      if (ops_[i].row == ops_[i - 1].row && ops_[i].store_id == ops_[i - 1].store_id) ops_[i].op = ops_[i - 1].op = kNone;
    rows_ = own.row_of;
    std::sort(rows_.begin(), rows_.end());
  }
  // The op, or kNone when this process lacks it (or cannot tell it apart).
  Index find(Index row, std::int64_t store_id) const {
    auto it = std::lower_bound(ops_.begin(), ops_.end(), Entry{row, store_id, 0});
    return it == ops_.end() || it->row != row || it->store_id != store_id ? kNone : it->op;
  }
  bool holds(Index row) const { return std::binary_search(rows_.begin(), rows_.end(), row); }

 private:
  struct Entry {
    Index row;
    std::int64_t store_id;
    Index op;
    bool operator<(const Entry& o) const { return row != o.row ? row < o.row : store_id < o.store_id; }
  };
  std::vector<Entry> ops_;
  std::vector<Index> rows_;
};

// On the root: the arrivals of each process's collective ops, as matchedArrival gives them, each
// match's taken once (matchedArrival at every participant would be participants² a match).
std::vector<std::string> arrivalParts(const RunOnRoot& root, int processes) {
  std::vector<std::vector<ArrivalFact>> facts(static_cast<std::size_t>(processes));
  const RunModel& m = root.model;
  for (Index match = 0; match < m.matches.size(); ++match) {
    if (m.matches.count[match] <= 1) continue;
    const MatchArrivals a = matchArrivals(m, match);
    for (Index p : m.matches.of(match)) {
      const Index op = m.collectives.op[p];
      const Index last_op = m.ops.start[op] == a.last ? op : a.first_last;
      const Index row = m.rankOfOp(op);
      facts[static_cast<std::size_t>(root.process_of_row[row])].push_back(
          {m.ops.store_id[op], a.last, a.second, m.ops.store_id[last_op], row, m.rankOfOp(last_op)});
    }
  }
  std::vector<std::string> parts;
  for (auto& f : facts) {
    parts.push_back(PartWriter().put(f).take());
    std::vector<ArrivalFact>().swap(f);
  }
  return parts;
}

// On the root: each iteration's first leg, from the candidates of every process.
std::vector<LegRequest> firstLegs(const RunOnRoot& root, std::vector<PathEndCandidate> candidates,
                                  std::vector<std::int64_t>& starts, std::vector<std::int64_t>& ends) {
  // Rank rows in order, a rank's iterations in order: the order criticalPaths() takes them in.
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.row < b.row; });
  std::map<std::int64_t, std::size_t> path_of;
  for (std::size_t k = 0; k < root.numbers.size(); ++k) path_of[root.numbers[k]] = k;
  starts.assign(root.numbers.size(), INT64_MAX);
  ends.assign(root.numbers.size(), 0);
  std::vector<const PathEndCandidate*> sink(root.numbers.size(), nullptr);
  for (const PathEndCandidate& c : candidates) {
    auto it = path_of.find(c.number);
    if (it == path_of.end()) continue;
    const std::size_t k = it->second;
    starts[k] = std::min(starts[k], c.start);
    if (c.sink != kNone && (!sink[k] || c.sink_end > sink[k]->sink_end)) sink[k] = &c;
  }
  std::vector<LegRequest> legs;
  for (std::size_t k = 0; k < sink.size(); ++k) {
    if (!sink[k]) continue;
    ends[k] = sink[k]->sink_end;
    LegRequest r;
    r.path = k;
    r.row = sink[k]->row;
    r.start.op = sink[k]->sink;
    r.start.time = sink[k]->sink_end;
    r.start.floor = starts[k];
    legs.push_back(r);
  }
  return legs;
}

// In a process: the legs asked of its ranks.
std::vector<LegResult> walkLegs(const OwnRanks& own, const PathWalker& walker, const CollectiveOps& ops,
                                const ArrivalOf& arrival, const std::vector<LegRequest>& requests) {
  std::vector<LegResult> results(requests.size());
  parallelFor(requests.size(), [&](std::size_t i) {
    const LegRequest& q = requests[i];
    LegResult& out = results[i];
    out.path = q.path;
    PathLegStart start = q.start;
    if (start.before) start.op = ops.find(q.row, q.store_id);
    if (start.op == kNone || start.op >= own.model.ops.size()) {
      out.failure = fmt::format("the collective op {} of rank row {} is not among this process's ops, or its id is not "
                                "its alone", q.store_id, q.row);
      return;
    }
    const PathLeg leg = walker.walk(start, arrival);
    for (PathSegment seg : leg.segments) {
      const PathNodeFacts f = pathNodeFacts(own.model, seg);
      seg.rank = own.row_of[seg.rank];
      out.segments.push_back(seg);
      out.store_ids.push_back(f.store_id);
      out.threads.push_back(f.thread);
      out.names.push_back(f.name);
    }
    out.handed_off = leg.handed_off;
    out.next_rank = leg.next.last_rank;
    out.next_store_id = leg.next.last_store_id;
    out.next_time = leg.next_time;
    out.straggler = leg.straggler;
    out.straggler_floor = leg.straggler_floor;
  });
  return results;
}

}  // namespace

trace::Result<PathsInLegs> walkCriticalPathsInLegs(const MpiSession& mpi, const RunOnRoot* root, const OwnRanks& own,
                                                 const PathWalker& walker,
                                                 const std::vector<std::vector<RankIteration>>& per_rank,
                                                 std::uint64_t& sent) {
  const RunModel& m = own.model;
  const CollectiveOps ops(own);

  // 1. Where the participants of this process's collectives arrived.
  std::vector<std::string> arrival_parts;
  if (mpi.root()) {
    arrival_parts = arrivalParts(*root, mpi.size());
    for (std::size_t p = 1; p < arrival_parts.size(); ++p) sent += arrival_parts[p].size();
  }
  const auto arrival_text = scatterFromRoot(std::move(arrival_parts), mpi);
  if (!arrival_text) return trace::failure("the collectives' arrivals add up to 2 GiB or more, more than one exchange can carry");
  arrival_parts.clear();
  std::vector<ArrivalFact> facts;
  trace::Status placed;
  if (!PartReader(*arrival_text).get(facts).ok()) placed = trace::failure("the collectives' arrivals arrived damaged");
  std::vector<std::int32_t> fact_of_collective(m.collectives.size(), -1);
  for (std::size_t i = 0; i < facts.size() && placed; ++i) {
    const Index op = ops.find(facts[i].row, facts[i].store_id);
    if (op == kNone)
      placed = trace::failure(fmt::format("the root's collective op {} of rank row {} is not among this process's ops, "
                                          "or its id is not its alone: the critical path cannot be walked across processes",
                                          facts[i].store_id, facts[i].row));
    else
      fact_of_collective[m.collectiveOf(op)] = static_cast<std::int32_t>(i);
  }
  if (trace::Status s = everyProcessOk(mpi, placed); !s) return s;
  const ArrivalOf arrival = [&](Index op, CollectiveArrival& out) {
    const Index c = m.collectiveOf(op);
    if (c == kNone || fact_of_collective[c] < 0) return false;
    const ArrivalFact& f = facts[static_cast<std::size_t>(fact_of_collective[c])];
    out = {f.last, f.second, f.last_rank, f.last_store_id, ops.holds(f.last_rank) ? ops.find(f.last_rank, f.last_store_id) : kNone};
    return true;
  };

  // 2. Where each iteration's path begins and ends.
  std::vector<PathEndCandidate> mine;
  for (Index r = 0; r < m.ranks.size(); ++r) {
    const Index row = own.row_of[r];
    if (row >= per_rank.size()) return trace::failure("the run's iterations do not cover this process's ranks");
    for (const RankIteration& it : per_rank[row]) {
      if (it.op_count == 0) continue;
      const RankPathEnds ends = rankPathEnds(m, r, it);
      mine.push_back({it.number, row, ends.start, ends.sink == kNone ? 0 : m.ops.end[ends.sink], ends.sink});
    }
  }
  auto all_candidates = gatherParts(mpi, PartWriter().put(mine).take(), sent);
  if (!all_candidates) return all_candidates.status();

  // 3. The legs, in rounds: every process walks what was asked of its ranks.
  std::vector<std::int64_t> starts, ends;
  std::vector<LegRequest> requests;
  std::vector<std::vector<LegResult>> legs;  // on the root, by path: latest first
  std::string failure;
  if (mpi.root()) {
    std::vector<PathEndCandidate> candidates;
    for (const std::string& part : *all_candidates) {
      std::vector<PathEndCandidate> c;
      if (!PartReader(part).get(c).ok()) failure = "a process's iteration ends arrived damaged";
      candidates.insert(candidates.end(), c.begin(), c.end());
    }
    requests = firstLegs(*root, std::move(candidates), starts, ends);
    legs.resize(root->numbers.size());
  }
  // A path hands over at most once per collective it passes: more rounds than collectives is a
  // walk that does not end.
  const std::size_t max_rounds = mpi.root() ? root->model.collectives.size() + 2 : 0;
  PathsInLegs out;
  for (std::size_t round = 0;; ++round) {
    std::string asked;
    if (mpi.root()) {
      if (round > max_rounds) failure = fmt::format("the critical path's walk did not end after {} legs", round);
      asked = !failure.empty() ? "!" + failure : requests.empty() ? std::string() : PartWriter().put(requests).take();
      sent += asked.size() * static_cast<std::uint64_t>(mpi.size() - 1);
    }
    asked = broadcastFromRoot(std::move(asked), mpi);
    if (asked.empty()) {
      out.rounds = round;
      break;
    }
    if (asked.front() == '!') return trace::failure(asked.substr(1));
    std::vector<LegRequest> all;
    if (!PartReader(asked).get(all).ok()) return trace::failure("the critical path's next legs arrived damaged");
    std::vector<LegRequest> for_me;
    for (const LegRequest& q : all)
      if (ops.holds(q.row)) for_me.push_back(q);
    PartWriter walked;
    walked.put(std::uint64_t{for_me.size()});
    for (const LegResult& r : walkLegs(own, walker, ops, arrival, for_me)) r.write(walked);
    auto answers = gatherParts(mpi, walked.take(), sent);
    if (!answers) return answers.status();
    if (!mpi.root()) continue;
    requests.clear();
    std::size_t answered = 0;
    for (std::size_t p = 0; p < answers->size() && failure.empty(); ++p) {
      PartReader in((*answers)[p]);
      std::uint64_t n = 0;
      in.get(n);
      for (std::uint64_t k = 0; k < n && failure.empty(); ++k) {
        LegResult r;
        if (!r.read(in) || r.path >= legs.size()) failure = "a process's leg of the critical path arrived damaged";
        else if (!r.failure.empty()) failure = fmt::format("process {}: {}", p, r.failure);
        if (!failure.empty()) break;
        ++answered, ++out.legs;
        if (r.handed_off && r.next_time > starts[r.path]) {
          LegRequest q;
          q.path = r.path;
          q.row = r.next_rank;
          q.store_id = r.next_store_id;
          q.start = {kNone, r.next_time, true, starts[r.path], r.straggler, r.straggler_floor};
          if (q.row >= root->process_of_row.size()) failure = "a leg of the critical path handed it to a rank the run lacks";
          requests.push_back(q);
        }
        legs[r.path].push_back(std::move(r));
      }
    }
    if (failure.empty() && answered != all.size())
      failure = fmt::format("{} legs of the critical path were asked for and {} came back", all.size(), answered);
  }
  if (!mpi.root()) return out;

  for (std::size_t k = 0; k < legs.size(); ++k) {
    if (legs[k].empty()) continue;
    CriticalPath p;
    p.iteration = root->numbers[k];
    p.start = starts[k];
    p.end = ends[k];
    for (auto leg = legs[k].rbegin(); leg != legs[k].rend(); ++leg) {
      p.segments.insert(p.segments.end(), leg->segments.begin(), leg->segments.end());
      for (std::size_t i = 0; i < leg->segments.size(); ++i)
        p.nodes.push_back({leg->store_ids[i], leg->threads[i], std::move(leg->names[i])});
    }
    p.attribute();
    out.paths.push_back(std::move(p));
  }
  return out;
}

}  // namespace syncopate::analyzer
